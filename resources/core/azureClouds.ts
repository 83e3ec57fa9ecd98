/** The Azure clouds this hook knows; `armEndpoint` is also ARM's token audience, and Cosmos's is the cloud-wide one (`@azure/cosmos` hard-codes the public cloud's). */
export const azureClouds = {
  AzurePublicCloud: {
    armEndpoint: "https://management.azure.com",
    authorityHost: "https://login.microsoftonline.com",
    cosmosSuffix: ".documents.azure.com",
    cosmosAudience: "https://cosmos.azure.com",
    dataPlaneSuffix: ".identity.azure.net",
  },
  AzureUSGovernment: {
    armEndpoint: "https://management.usgovcloudapi.net",
    authorityHost: "https://login.microsoftonline.us",
    cosmosSuffix: ".documents.azure.us",
    cosmosAudience: "https://cosmos.azure.us",
    dataPlaneSuffix: ".identity.usgovcloudapi.net",
  },
  AzureChinaCloud: {
    armEndpoint: "https://management.chinacloudapi.cn",
    authorityHost: "https://login.chinacloudapi.cn",
    cosmosSuffix: ".documents.azure.cn",
    cosmosAudience: "https://cosmos.azure.cn",
    dataPlaneSuffix: ".identity.chinacloudapi.cn",
  },
} as const;

export type AzureCloudName = keyof typeof azureClouds;

/** True for hosts that only a local sandbox or emulator uses. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare.endsWith(".localhost") || bare === "::1" || /^127(?:\.\d{1,3}){3}$/.test(bare);
}
