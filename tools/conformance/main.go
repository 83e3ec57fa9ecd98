// Command conformance walks upstream ARO-HCP's per-cluster credential chain against the sandbox
// with the Go modules upstream's backend pins (backend/go.mod at ARO-HCP c3f02f9e), built as the
// backend builds it (backend/pkg/azure/client/fpa_mi_dataplane_client_builder.go and
// smi_client_builder.go, internal/fpa/token_credential_retriever.go, and the two controllers of
// backend/pkg/controllers/cluster/identity), and prints what it read as JSON.
//
// It is a client of the sandbox only: it reads the endpoints file `npm run sandbox` writes (the
// endpoints, the CA bundle, the first party's settings and bundle file, the clusters) and talks
// HTTPS to the sandbox's Entra, Managed Identities data plane and ARM, trusting the sandbox CA
// through the clients' transport.
//
// Usage: conformance -endpoints .sandbox/endpoints.json [-clusters clusters.json] [-out result.json] [-refusals=false]
//
// -refusals=false leaves out the requests that must be refused, so that a recording of what the
// sandbox received holds only the chain's own requests.
//
// One deviation from upstream's configuration, because the authority is local: the first-party
// credential has instance discovery off. With it on, MSAL for Go asks login.microsoftonline.com to
// validate any authority host it does not know (authority.go, AADInstanceDiscovery), which a
// machine without internet cannot reach and a test must not call. The SMI credential upstream
// builds (dataplane.GetCredential) has it off already.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azcorearm "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/msi/armmsi"
	"github.com/Azure/msi-dataplane/pkg/dataplane"
)

// cluster is one cluster as the endpoints file (or -clusters) describes it: what upstream reads
// from the cluster's document.
type cluster struct {
	ClusterResourceID      string            `json:"clusterResourceId"`
	IdentityURL            string            `json:"identityUrl"`
	ServiceManagedIdentity string            `json:"serviceManagedIdentity"`
	DataPlaneOperators     map[string]string `json:"dataPlaneOperators"`
	ControlPlaneOperators  map[string]string `json:"controlPlaneOperators"`
	TenantID               string            `json:"tenantId"`
}

type principalFile struct {
	ClientID              string `json:"clientId"`
	TenantID              string `json:"tenantId"`
	CertificateBundlePath string `json:"certificateBundlePath"`
}

type endpointsFile struct {
	Endpoints struct {
		Arm       string `json:"arm"`
		DataPlane string `json:"dataPlane"`
	} `json:"endpoints"`
	CaBundlePath    string `json:"caBundlePath"`
	CredentialChain struct {
		EntraAuthorityHost    string        `json:"entraAuthorityHost"`
		ServiceTenantID       string        `json:"serviceTenantId"`
		DataPlaneAudience     string        `json:"dataPlaneAudience"`
		FirstPartyApplication principalFile `json:"firstPartyApplication"`
	} `json:"credentialChain"`
	DemoFleet []cluster `json:"demoFleet"`
}

// identityRead is what one read gave: the IDs (null when the service answered null) or the error.
type identityRead struct {
	ResourceID  string  `json:"resourceId"`
	ClientID    *string `json:"clientId"`
	PrincipalID *string `json:"principalId"`
	Error       *failed `json:"error,omitempty"`
}

type failed struct {
	StatusCode int    `json:"statusCode,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message"`
}

type clusterResult struct {
	ClusterResourceID string `json:"clusterResourceId"`
	// DataPlaneOperators as upstream's FetchDataPlaneOperatorsManagedIdentitiesInfo reads them:
	// keyed by lowercased ID, read with the SMI's credential through armmsi.
	DataPlaneOperators map[string]identityRead `json:"dataPlaneOperators"`
	// ControlPlaneOperators and ServiceManagedIdentity as upstream's FetchMSIIdentitiesInfo reads
	// them: one data plane request, entries matched by lowercased resource_id.
	ControlPlaneOperators  map[string]identityRead `json:"controlPlaneOperators"`
	ServiceManagedIdentity *identityRead           `json:"serviceManagedIdentity,omitempty"`
	// Errors of the chain's steps (nothing read past a failed step).
	Errors []string `json:"errors,omitempty"`
}

type refusal struct {
	Description     string  `json:"description"`
	Expected        string  `json:"expected"`
	StatusCode      int     `json:"statusCode"`
	Code            string  `json:"code,omitempty"`
	WWWAuthenticate string  `json:"wwwAuthenticate,omitempty"`
	Error           *string `json:"error,omitempty"`
	Passed          bool    `json:"passed"`
}

type result struct {
	Modules    map[string]string `json:"modules"`
	Deviations []string          `json:"deviations"`
	Clusters   []clusterResult   `json:"clusters"`
	Refusals   []refusal         `json:"refusals,omitempty"`
	Passed     bool              `json:"passed"`
}

const instanceDiscoveryDeviation = "first-party ClientCertificateCredential: DisableInstanceDiscovery true (upstream leaves it on; MSAL for Go would ask login.microsoftonline.com to validate the local authority host)"

func main() {
	endpointsPath := flag.String("endpoints", ".sandbox/endpoints.json", "the endpoints file the sandbox writes")
	clustersPath := flag.String("clusters", "", "a JSON list of clusters (default: the endpoints file's demoFleet)")
	outPath := flag.String("out", "", "where to write the result (default: standard output)")
	checkRefusals := flag.Bool("refusals", true, "also make the requests that must be refused")
	flag.Parse()
	res, err := run(*endpointsPath, *clustersPath, *checkRefusals)
	if err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	encoded, _ := json.MarshalIndent(res, "", "  ")
	encoded = append(encoded, '\n')
	if *outPath == "" {
		_, _ = os.Stdout.Write(encoded)
	} else if err := os.WriteFile(*outPath, encoded, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(2)
	}
	if !res.Passed {
		os.Exit(1)
	}
}

func run(endpointsPath, clustersPath string, checkRefusals bool) (*result, error) {
	var endpoints endpointsFile
	if err := readJSON(endpointsPath, &endpoints); err != nil {
		return nil, err
	}
	clusters := endpoints.DemoFleet
	if clustersPath != "" {
		clusters = nil
		if err := readJSON(clustersPath, &clusters); err != nil {
			return nil, err
		}
	}
	if len(clusters) == 0 {
		return nil, errors.New("no cluster to check: the endpoints file has no demoFleet and no -clusters file was given")
	}
	transport, err := sandboxTransport(endpoints.CaBundlePath)
	if err != nil {
		return nil, err
	}
	chain := endpoints.CredentialChain
	// One azcore.ClientOptions, as upstream's backend passes one to the first party, the data plane
	// client factory and (inside arm.ClientOptions) to the SMI credential and armmsi: the cloud's
	// authority host and ARM endpoint, and the sandbox CA through the transport.
	clientOptions := azcore.ClientOptions{
		Transport: transport,
		Cloud: cloud.Configuration{
			ActiveDirectoryAuthorityHost: strings.TrimSuffix(chain.EntraAuthorityHost, "/") + "/",
			Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
				cloud.ResourceManager: {Audience: "https://management.azure.com", Endpoint: endpoints.Endpoints.Arm},
			},
		},
	}
	armOptions := &azcorearm.ClientOptions{ClientOptions: clientOptions}
	firstParty, err := firstPartyCredential(chain.FirstPartyApplication, chain.ServiceTenantID, clientOptions)
	if err != nil {
		return nil, err
	}
	factory := dataplane.NewClientFactory(firstParty, chain.DataPlaneAudience, &clientOptions)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res := &result{Modules: moduleVersions(), Deviations: []string{instanceDiscoveryDeviation}, Passed: true}
	credentials := map[string]azcore.TokenCredential{}
	for _, c := range clusters {
		clusterRes, smiCredential := readCluster(ctx, factory, armOptions, c)
		if smiCredential != nil {
			credentials[strings.ToLower(c.ClusterResourceID)] = smiCredential
		}
		if len(clusterRes.Errors) > 0 {
			res.Passed = false
		}
		res.Clusters = append(res.Clusters, clusterRes)
	}
	if checkRefusals {
		res.Refusals = refusals(ctx, transport, factory, armOptions, clusters, credentials)
	}
	for _, r := range res.Refusals {
		res.Passed = res.Passed && r.Passed
	}
	return res, nil
}

func readJSON(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// sandboxTransport is an HTTP client that trusts the sandbox's CA bundle, and only it.
func sandboxTransport(caBundlePath string) (*http.Client, error) {
	pem, err := os.ReadFile(caBundlePath)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s holds no certificate", caBundlePath)
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}, nil
}

// firstPartyCredential is upstream's RetrieveCredential(serviceTenantID, "*"): a client certificate
// credential of the service tenant, the chain sent, every tenant allowed (the data plane's
// challenge names the tenant).
func firstPartyCredential(app principalFile, serviceTenantID string, options azcore.ClientOptions) (azcore.TokenCredential, error) {
	bundle, err := os.ReadFile(app.CertificateBundlePath)
	if err != nil {
		return nil, err
	}
	certificates, key, err := azidentity.ParseCertificates(bundle, nil)
	if err != nil {
		return nil, fmt.Errorf("first party's bundle: %w", err)
	}
	return azidentity.NewClientCertificateCredential(serviceTenantID, app.ClientID, certificates, key, &azidentity.ClientCertificateCredentialOptions{
		SendCertificateChain:       true,
		AdditionallyAllowedTenants: []string{"*"},
		ClientOptions:              options,
		DisableInstanceDiscovery:   true,
	})
}

// smiCredential is upstream's credentialsForServiceManagedIdentity.
func smiCredential(ctx context.Context, factory dataplane.ClientFactory, armOptions *azcorearm.ClientOptions, c cluster) (azcore.TokenCredential, error) {
	smiResourceID, err := azcorearm.ParseResourceID(c.ServiceManagedIdentity)
	if err != nil {
		return nil, fmt.Errorf("service managed identity: %w", err)
	}
	client, err := factory.NewClient(c.IdentityURL)
	if err != nil {
		return nil, fmt.Errorf("data plane client: %w", err)
	}
	resp, err := client.GetUserAssignedIdentitiesCredentials(ctx, dataplane.UserAssignedIdentitiesRequest{IdentityIDs: []string{smiResourceID.String()}})
	if err != nil {
		return nil, fmt.Errorf("data plane credentials of the SMI: %w", err)
	}
	if len(resp.ExplicitIdentities) == 0 {
		return nil, fmt.Errorf("the data plane returned no credentials for the SMI %s", smiResourceID.String())
	}
	credential, err := dataplane.GetCredential(armOptions.ClientOptions, resp.ExplicitIdentities[0])
	if err != nil {
		// Not the typed nil pointer: callers test the interface against nil.
		return nil, fmt.Errorf("credential from the data plane's answer: %w", err)
	}
	return credential, nil
}

func readCluster(ctx context.Context, factory dataplane.ClientFactory, armOptions *azcorearm.ClientOptions, c cluster) (clusterResult, azcore.TokenCredential) {
	res := clusterResult{ClusterResourceID: c.ClusterResourceID, DataPlaneOperators: map[string]identityRead{}, ControlPlaneOperators: map[string]identityRead{}}
	clusterID, err := azcorearm.ParseResourceID(c.ClusterResourceID)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res, nil
	}

	// FetchDataPlaneOperatorsManagedIdentitiesInfo: the SMI's credential from the data plane,
	// armmsi in the cluster's subscription, each unique (lowercased) operator identity read.
	credential, err := smiCredential(ctx, factory, armOptions, c)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
	} else {
		client, err := armmsi.NewUserAssignedIdentitiesClient(clusterID.SubscriptionID, credential, armOptions)
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
		} else {
			unique := map[string]struct{}{}
			for _, id := range c.DataPlaneOperators {
				unique[strings.ToLower(id)] = struct{}{}
			}
			for id := range unique {
				resourceID, err := azcorearm.ParseResourceID(id)
				if err != nil {
					res.Errors = append(res.Errors, err.Error())
					continue
				}
				read := identityRead{ResourceID: id}
				got, err := client.Get(ctx, resourceID.ResourceGroupName, resourceID.Name, nil)
				if err != nil {
					read.Error = failure(err)
				} else if got.Properties == nil {
					res.Errors = append(res.Errors, fmt.Sprintf("identity %s without properties", id))
				} else {
					read.ClientID, read.PrincipalID = got.Properties.ClientID, got.Properties.PrincipalID
				}
				res.DataPlaneOperators[id] = read
			}
		}
	}

	// FetchMSIIdentitiesInfo: one request with every control plane operator identity (unique by
	// lowercased ID) and the SMI, as the first party; the answer matched by lowercased resource_id.
	var requested []*azcorearm.ResourceID
	seen := map[string]struct{}{}
	for _, name := range sortedKeys(c.ControlPlaneOperators) {
		resourceID, err := azcorearm.ParseResourceID(c.ControlPlaneOperators[name])
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
			return res, credential
		}
		if _, dup := seen[strings.ToLower(resourceID.String())]; dup {
			continue
		}
		seen[strings.ToLower(resourceID.String())] = struct{}{}
		requested = append(requested, resourceID)
	}
	smiResourceID, err := azcorearm.ParseResourceID(c.ServiceManagedIdentity)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res, credential
	}
	identityIDs := make([]string, 0, len(requested)+1)
	for _, resourceID := range requested {
		identityIDs = append(identityIDs, resourceID.String())
	}
	identityIDs = append(identityIDs, smiResourceID.String())
	client, err := factory.NewClient(c.IdentityURL)
	if err != nil {
		res.Errors = append(res.Errors, err.Error())
		return res, credential
	}
	resp, err := client.GetUserAssignedIdentitiesCredentials(ctx, dataplane.UserAssignedIdentitiesRequest{IdentityIDs: identityIDs})
	if err != nil {
		res.Errors = append(res.Errors, fmt.Sprintf("data plane credentials of the cluster's identities: %v", err))
		return res, credential
	}
	if len(resp.ExplicitIdentities) != len(identityIDs) {
		res.Errors = append(res.Errors, fmt.Sprintf("the data plane answered %d credentials for %d identities", len(resp.ExplicitIdentities), len(identityIDs)))
		return res, credential
	}
	byLowerID := map[string]dataplane.UserAssignedIdentityCredentials{}
	for index, entry := range resp.ExplicitIdentities {
		if entry.ResourceID == nil || *entry.ResourceID == "" {
			res.Errors = append(res.Errors, fmt.Sprintf("entry %d of the data plane's answer has no resource_id", index))
			return res, credential
		}
		byLowerID[strings.ToLower(*entry.ResourceID)] = entry
	}
	for _, resourceID := range append(requested, smiResourceID) {
		key := strings.ToLower(resourceID.String())
		entry, ok := byLowerID[key]
		if !ok {
			res.Errors = append(res.Errors, fmt.Sprintf("the data plane's answer has no entry for %s", key))
			return res, credential
		}
		read := identityRead{ResourceID: key, ClientID: entry.ClientID, PrincipalID: entry.ObjectID}
		if resourceID == smiResourceID {
			res.ServiceManagedIdentity = &read
		} else {
			res.ControlPlaneOperators[key] = read
		}
	}
	return res, credential
}

// refusals checks what must be refused, with the clients upstream uses where a client is involved.
func refusals(ctx context.Context, transport *http.Client, factory dataplane.ClientFactory, armOptions *azcorearm.ClientOptions, clusters []cluster, credentials map[string]azcore.TokenCredential) []refusal {
	var out []refusal
	first := clusters[0]

	// No token: 401 with the bearer challenge naming an authority and a tenant.
	noToken := refusal{Description: "a data plane request without a token", Expected: "401 with WWW-Authenticate: Bearer authorization=\"<authority>/<tenant>\""}
	if response, err := postWithoutToken(ctx, transport, first); err != nil {
		noToken.Error = errorText(err)
	} else {
		noToken.StatusCode = response.StatusCode
		noToken.WWWAuthenticate = response.Header.Get("WWW-Authenticate")
		noToken.Passed = response.StatusCode == http.StatusUnauthorized && strings.HasPrefix(noToken.WWWAuthenticate, "Bearer authorization=\"https://")
	}
	out = append(out, noToken)

	if len(clusters) < 2 {
		return out
	}
	// Another cluster's SMI at this cluster's identity URL: refused by the data plane.
	second := clusters[1]
	foreignSmi := refusal{Description: "another cluster's SMI asked at this cluster's identity URL", Expected: "a 4xx from the data plane"}
	if client, err := factory.NewClient(first.IdentityURL); err != nil {
		foreignSmi.Error = errorText(err)
	} else {
		_, err := client.GetUserAssignedIdentitiesCredentials(ctx, dataplane.UserAssignedIdentitiesRequest{IdentityIDs: []string{second.ServiceManagedIdentity}})
		recordRefusal(&foreignSmi, err, func(status int, _ string) bool { return status >= 400 && status < 500 })
	}
	out = append(out, foreignSmi)

	// Another cluster's identity read with this cluster's SMI token: 403 AuthorizationFailed when
	// both are in one tenant, 401 InvalidAuthenticationTokenTenant when the other is in another tenant.
	for _, pair := range clusterPairs(clusters) {
		owner, other, sameTenant := pair[0], pair[1], strings.EqualFold(pair[0].TenantID, pair[1].TenantID)
		credential := credentials[strings.ToLower(owner.ClusterResourceID)]
		foreignIdentity := firstValue(other.DataPlaneOperators)
		if credential == nil || foreignIdentity == "" {
			continue
		}
		r := refusal{Description: fmt.Sprintf("%s's identity read with %s's SMI token", other.ClusterResourceID, owner.ClusterResourceID)}
		expectedCode := "AuthorizationFailed"
		expectedStatus := http.StatusForbidden
		if !sameTenant {
			expectedCode, expectedStatus = "InvalidAuthenticationTokenTenant", http.StatusUnauthorized
		}
		r.Expected = fmt.Sprintf("%d %s", expectedStatus, expectedCode)
		resourceID, err := azcorearm.ParseResourceID(foreignIdentity)
		if err != nil {
			r.Error = errorText(err)
		} else if client, err := armmsi.NewUserAssignedIdentitiesClient(resourceID.SubscriptionID, credential, armOptions); err != nil {
			r.Error = errorText(err)
		} else {
			_, err := client.Get(ctx, resourceID.ResourceGroupName, resourceID.Name, nil)
			recordRefusal(&r, err, func(status int, code string) bool { return status == expectedStatus && code == expectedCode })
		}
		out = append(out, r)
	}
	return out
}

// clusterPairs picks one pair of clusters in one tenant and one pair in two tenants, when there are.
func clusterPairs(clusters []cluster) [][2]cluster {
	var pairs [][2]cluster
	var same, other bool
	for i := range clusters {
		for j := range clusters {
			if i == j {
				continue
			}
			sameTenant := strings.EqualFold(clusters[i].TenantID, clusters[j].TenantID)
			if (sameTenant && !same) || (!sameTenant && !other) {
				pairs = append(pairs, [2]cluster{clusters[i], clusters[j]})
				same, other = same || sameTenant, other || !sameTenant
			}
		}
	}
	return pairs
}

func recordRefusal(r *refusal, err error, expected func(status int, code string) bool) {
	if err == nil {
		r.Error = errorText(errors.New("the request succeeded"))
		return
	}
	var responseError *azcore.ResponseError
	if !errors.As(err, &responseError) {
		r.Error = errorText(err)
		return
	}
	r.StatusCode, r.Code = responseError.StatusCode, responseError.ErrorCode
	if responseError.RawResponse != nil {
		r.WWWAuthenticate = responseError.RawResponse.Header.Get("WWW-Authenticate")
	}
	r.Passed = expected(r.StatusCode, r.Code)
}

func postWithoutToken(ctx context.Context, transport *http.Client, c cluster) (*http.Response, error) {
	url := c.IdentityURL + "&api-version=2024-01-01"
	if !strings.Contains(c.IdentityURL, "?") {
		url = c.IdentityURL + "?api-version=2024-01-01"
	}
	body, _ := json.Marshal(dataplane.UserAssignedIdentitiesRequest{IdentityIDs: []string{c.ServiceManagedIdentity}})
	request, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	request.Header.Set("Content-Type", "application/json")
	response, err := transport.Do(request)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, response.Body)
	_ = response.Body.Close()
	return response, nil
}

func failure(err error) *failed {
	var responseError *azcore.ResponseError
	if errors.As(err, &responseError) {
		return &failed{StatusCode: responseError.StatusCode, Code: responseError.ErrorCode, Message: firstLine(err.Error())}
	}
	return &failed{Message: firstLine(err.Error())}
}

func errorText(err error) *string {
	text := firstLine(err.Error())
	return &text
}

func firstLine(text string) string {
	if index := strings.IndexByte(text, '\n'); index >= 0 {
		return text[:index]
	}
	return text
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}

func firstValue(m map[string]string) string {
	keys := sortedKeys(m)
	if len(keys) == 0 {
		return ""
	}
	return m[keys[0]]
}

// moduleVersions reports the versions this program was built with, to prove they are upstream's pins.
func moduleVersions() map[string]string {
	versions := map[string]string{}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return versions
	}
	versions["go"] = info.GoVersion
	for _, module := range info.Deps {
		switch module.Path {
		case "github.com/Azure/msi-dataplane", "github.com/Azure/azure-sdk-for-go/sdk/azidentity", "github.com/Azure/azure-sdk-for-go/sdk/azcore",
			"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/msi/armmsi", "github.com/AzureAD/microsoft-authentication-library-for-go", "golang.org/x/crypto":
			versions[module.Path] = module.Version
		}
	}
	return versions
}

var _ policy.Transporter = (*http.Client)(nil)
