/**
 * The table `npm start` prints: each cluster's identities as persisted in Cosmos, both halves of
 * the status (HALF `data plane` for the data plane operators, `msi` for the control plane
 * operators and the service managed identity), read back with the real Cosmos client (not from
 * Pulumi state).
 */
import type { Container } from "@azure/cosmos";

/** One printed row. */
export interface SummaryRow {
  readonly cluster: string;
  readonly half: string;
  readonly identity: string;
  readonly clientId: string;
  readonly principalId: string;
  readonly error: string;
}

/** Reads the ServiceProviderCluster documents of the given clusters and flattens their status. */
export async function readSummaryRows(
  container: Container,
  clusters: ReadonlyArray<{ readonly clusterResourceId: string; readonly partitionKey: string; readonly documentId: string }>,
): Promise<SummaryRow[]> {
  const rows: SummaryRow[] = [];
  for (const cluster of clusters) {
    const { resource } = await container.item(cluster.documentId, cluster.partitionKey).read<Record<string, unknown>>();
    const clusterName = cluster.clusterResourceId.split("/").pop() ?? cluster.clusterResourceId;
    type Entry = Record<string, string | undefined>;
    const status = (
      resource?.properties as
        | {
            status?: {
              dataPlaneOperatorsManagedIdentities?: { identities?: Record<string, Entry> };
              msiManagedIdentities?: { controlPlaneOperatorsIdentities?: Record<string, Entry>; serviceManagedIdentity?: Entry };
            };
          }
        | undefined
    )?.status;
    const identities = Object.values(status?.dataPlaneOperatorsManagedIdentities?.identities ?? {});
    const msi = status?.msiManagedIdentities;
    const msiEntries = [
      ...Object.values(msi?.controlPlaneOperatorsIdentities ?? {}),
      ...(msi?.serviceManagedIdentity === undefined ? [] : [msi.serviceManagedIdentity]),
    ];
    const row = (half: string, entry: Entry, id: string | undefined): SummaryRow => ({
      cluster: clusterName,
      half,
      identity: (id ?? "").split("/").pop() ?? "",
      clientId: entry.clientId ?? "",
      principalId: entry.principalId ?? "",
      error: entry.retrievalError ?? "",
    });
    if (resource === undefined || identities.length + msiEntries.length === 0) {
      rows.push({
        cluster: clusterName,
        half: "",
        identity: resource === undefined ? "(document missing)" : "(none)",
        clientId: "",
        principalId: "",
        error: "",
      });
    }
    for (const entry of identities) rows.push(row("data plane", entry, entry.resourceID));
    for (const entry of msiEntries) rows.push(row("msi", entry, entry.resourceId));
  }
  return rows;
}

/** Renders rows as an aligned text table; long errors are cut for the terminal. */
export function formatTable(rows: readonly SummaryRow[]): string {
  const headers: SummaryRow = { cluster: "CLUSTER", half: "HALF", identity: "IDENTITY", clientId: "CLIENT ID", principalId: "PRINCIPAL ID", error: "ERROR" };
  const columns = Object.keys(headers) as Array<keyof SummaryRow>;
  const cells = [headers, ...rows].map((row) =>
    columns.map((column) => (column === "error" && row[column].length > 60 ? `${row[column].slice(0, 57)}...` : row[column])),
  );
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index].length)));
  return cells
    .map((line) =>
      line
        .map((cell, index) => cell.padEnd(widths[index]))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
