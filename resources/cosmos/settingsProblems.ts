/**
 * Tells a Cosmos answer about the settings from one about a document: a missing database or
 * container answers 404 as a missing document does, told apart only by substatus 1003 (against 0
 * or none); a missing account has no DNS name (ENOTFOUND) or answers 403 with substatus 1008.
 */
import { CosmosDocumentError } from "../core/errors";
import { cosmosStatusCode } from "../core/errorClassification";
import { projectName } from "../core/settings";

/** Where a store's container is, for messages: the values in use, never a key. */
export interface CosmosLocation {
  readonly endpoint?: string;
  readonly database: string;
  readonly container: string;
}

/** An SDK response's or error's status; `networkCode` is a Node error code (`ENOTFOUND`) of a request that got no answer. */
interface CosmosAnswer {
  readonly statusCode?: number;
  readonly substatus?: number;
  readonly networkCode?: string;
}

const ownerResourceNotFoundSubstatus = 1003;
const databaseAccountNotFoundSubstatus = 1008;

/** The answer an error of @azure/cosmos carries: `ErrorResponse` has a numeric `code`, a failed request a string one. */
export function answerOfError(error: unknown): CosmosAnswer {
  const { code, substatus } = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown; substatus?: unknown };
  return {
    statusCode: cosmosStatusCode(error),
    substatus: typeof substatus === "number" ? substatus : undefined,
    networkCode: typeof code === "string" ? code : undefined,
  };
}

/** The configuration error for an answer saying the settings' account, database or container does not exist; else undefined. */
export function settingsErrorFor(answer: CosmosAnswer, verb: "read" | "write", documentId: string, location: CosmosLocation): CosmosDocumentError | undefined {
  const account = location.endpoint === undefined ? "" : ` ${location.endpoint}`;
  let problem: string;
  if (answer.statusCode === 404 && answer.substatus === ownerResourceNotFoundSubstatus) {
    problem =
      `the Cosmos DB database '${location.database}' or its container '${location.container}' does not exist` +
      ` (NotFound, HTTP 404, substatus ${ownerResourceNotFoundSubstatus}: owner resource does not exist)`;
  } else if (answer.statusCode === 403 && answer.substatus === databaseAccountNotFoundSubstatus) {
    problem = `the Cosmos DB account${account} does not exist (Forbidden, HTTP 403, substatus ${databaseAccountNotFoundSubstatus})`;
  } else if (answer.networkCode === "ENOTFOUND") {
    problem = `the host name of the Cosmos DB account${account} does not resolve (ENOTFOUND): no such account, or DNS does not know it`;
  } else {
    return undefined;
  }
  return configurationError(
    documentId,
    answer.statusCode,
    `${problem}; nothing was written. ${settingsAdvice(location)}`,
    ` [${verb} of document ${documentId}]`,
  );
}

/** The error for a point read answered without a document and not as a missing one: shaped like the SDK's `ErrorResponse`. */
export function unansweredReadError(answer: CosmosAnswer, documentId: string, location: CosmosLocation): Error {
  const substatus = answer.substatus === undefined ? "" : ` with substatus ${answer.substatus}`;
  return (
    settingsErrorFor(answer, "read", documentId, location) ??
    Object.assign(new Error(`Cosmos answered HTTP ${answer.statusCode}${substatus} without document ${documentId}`), {
      code: answer.statusCode,
      substatus: answer.substatus,
      body: {
        code: answer.statusCode === 404 ? "NotFound" : "CosmosError",
        message: `the answer${substatus} carries no document and does not say that the document is absent`,
      },
    })
  );
}

interface AbsentDocuments {
  readonly serviceProviderClusterDocumentId: string;
  readonly clusterDocumentId: string;
  readonly subscriptionDocumentId: string;
  readonly subscriptionResourceId: string;
  readonly clusterName: string;
}

/**
 * The configuration error for a cluster none of whose documents is in the container, its
 * subscription's included: the resource provider keeps a subscription's document beside its
 * clusters', so the container is not the fleet's and the cluster is not shown deleted.
 */
export function absentEverywhereError(verb: "refresh" | "update", documents: AbsentDocuments, location: CosmosLocation | undefined): CosmosDocumentError {
  const where = location === undefined ? "the container" : `container '${location.container}' of database '${location.database}'`;
  const problem =
    `none of the documents of cluster ${documents.clusterName} is in ${where} (NotFound, HTTP 404): neither the ServiceProviderCluster document ${documents.serviceProviderClusterDocumentId}, ` +
    `the HCPOpenShiftCluster document ${documents.clusterDocumentId} nor the document of subscription ${documents.subscriptionResourceId} (${documents.subscriptionDocumentId}). ` +
    "The resource provider keeps each subscription's document beside its clusters' documents, so the settings point at another container than the " +
    `fleet's (or the subscription was never registered with this resource provider), and the missing documents do not prove the cluster deleted; ` +
    `the ${verb} wrote nothing and state keeps the resource. ${settingsAdvice(location)}`;
  return configurationError(documents.serviceProviderClusterDocumentId, 404, problem);
}

/** The error of a Cosmos answer that says the settings, not the document, are at fault; `reference` names the operation. */
function configurationError(documentId: string, statusCode: number | undefined, configurationProblem: string, reference = ""): CosmosDocumentError {
  return new CosmosDocumentError({ documentId, statusCode, message: `${configurationProblem}${reference}`, configurationProblem });
}

/** Which settings to check, with the values in use, and the engine rule that catches users out. */
function settingsAdvice(location: CosmosLocation | undefined): string {
  const endpoint = location?.endpoint === undefined ? "" : ` (now ${location.endpoint})`;
  const database = location === undefined ? "" : ` (now '${location.database}')`;
  const container = location === undefined ? "" : ` (now '${location.container}')`;
  return (
    `Check '${projectName}:cosmosEndpoint'${endpoint}, '${projectName}:cosmosDatabase'${database} and ` +
    `'${projectName}:cosmosContainer'${container}, or ARO_HCP_COSMOS_ENDPOINT, ARO_HCP_COSMOS_DATABASE and ARO_HCP_COSMOS_CONTAINER. ` +
    "A plain `pulumi refresh` or `pulumi destroy` uses the settings stored at the last `pulumi up`: after changing one, run `pulumi up` or `pulumi refresh --run-program`."
  );
}
