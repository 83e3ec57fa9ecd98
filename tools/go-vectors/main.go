// Command go-vectors prints test vectors for the hook's lowercasing, computed by Go itself.
//
// Upstream (the ARO-HCP backend, written in Go) lowercases ARM IDs with strings.ToLower before
// deriving Cosmos document ids, partition keys and identity map keys. JavaScript's toLowerCase
// differs for some letters (special casing of U+0130, final sigma, a newer Unicode version), so the
// hook carries its own Go-exact lowercasing (resources/core/goStrings.ts). These vectors are the
// evidence that it matches: they are produced here by Go's own standard library.
//
// Usage (from this directory):
//
//	go run . > ../../test/fixtures/goVectors.json      the vectors (committed; a unit test builds this program and compares)
//	go run . -table                                    the compressed mapping table pasted into goStrings.ts
//	go run . -decode < document.json                   both status halves of a ServiceProviderCluster document as upstream's types decode and encode them
//
// The data plane request vectors run upstream's own client (github.com/Azure/msi-dataplane, the
// version ARO-HCP's backend pins, from the Go module proxy); everything else is the standard library.
package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/msi-dataplane/pkg/dataplane"
	"github.com/go-logr/logr"
)

// resourceIDNamespace is upstream's namespace UUID for Cosmos item ids (upstream-behaviour.md §1.1).
const resourceIDNamespace = "bf1ee0a1-0147-41ed-a083-d3cbbf7bea99"

const subscription = "0465bc32-C654-41b8-8D87-9815d7abe8f6"

// textInputs cover the letters named in issue 10 item 5 and the neighbours that trip
// JavaScript-versus-Go differences, plus mixed ASCII.
var textInputs = []string{
	"İ", "I", "ı", "i", "İSTANBUL", "ISPARTA", "Iıİi", "DİYARBAKIR", // Turkish dotted and dotless i
	"Σ", "σ", "ς", "ΟΔΟΣ", "ΣΊΣΥΦΟΣ", "ΟΔΟΣ-ΑΘΗΝΑ", "Ω", "Ω", "ϴ", "ΆΈΉ", // Greek, word-final sigma, Ohm sign
	"МОСКВА", "Москва-RG", "ЁЖИК", "ЀЍЎЏ", "Ѡѡ", // Cyrillic
	"ß", "ẞ", "STRASSE", "Straße", "GROẞ", // German sharp s
	"Test-RG_01.(x)", "some-resource-group", "MonstrousPrecinct", "ABCXYZ abcxyz 0123456789 -_.()", // mixed ASCII
	"K", "Å", "ǅ", "ǈ", "ǋ", "ǲ", // Kelvin and Angstrom signs, titlecase digraphs
	"Ꭰ", "ᲐᲑᲒ", "𐐀𐐁", "𞤀", "Ⓐ", "Ａ", // Cherokee, Georgian Mtavruli, Deseret, Adlam, circled and fullwidth
	"İ-Σ-ß-Ж-ı", // all at once
}

// armIDs are whole ARM IDs with such names; for each the vectors hold the lowercased string and
// the document id upstream derives from it.
var armIDs = []string{
	// Upstream's own vectors (upstream-behaviour.md §1.1), to tie this generator to upstream's ids.
	"/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster/serviceProviderClusters/default",
	"/subscriptions/0465bc32-c654-41b8-8d87-9815d7abe8f6/resourceGroups/some-resource-group/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/some-hcp-cluster",
	"/subscriptions/a433a095-1277-44f1-8453-8d61a4d848c2/resourceGroups/unimportantPostponement/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/monstrousPrecinct",
	"/subscriptions/a433a095-1277-44f1-8453-8d61a4d848c2",
	// Clusters and their ServiceProviderClusters with non-ASCII resource group and cluster names.
	clusterID("İSTANBUL-RG", "cluster-İ"),
	clusterID("İSTANBUL-RG", "cluster-İ") + "/serviceProviderClusters/default",
	clusterID("ΟΔΟΣ", "ΣΊΣΥΦΟΣ"),
	clusterID("ΟΔΟΣ", "ΣΊΣΥΦΟΣ") + "/serviceProviderClusters/default",
	clusterID("Straße-GROẞ", "STRASSE"),
	clusterID("Straße-GROẞ", "STRASSE") + "/serviceProviderClusters/default",
	clusterID("МОСКВА-rg", "Кластер"),
	clusterID("МОСКВА-rg", "Кластер") + "/serviceProviderClusters/default",
	clusterID("Iıİi", "KÅǅ"),
	clusterID("Iıİi", "KÅǅ") + "/serviceProviderClusters/default",
	// User-assigned identities: their lowercased IDs are the keys of the identities map.
	identityID("İSTANBUL-RG", "disk-csi-İ"),
	identityID("ΟΔΟΣ", "ΤΑΥΤΟΤΗΣ"),
	identityID("Straße", "ingress-ẞ"),
	identityID("МОСКВА-rg", "Идентичность"),
	identityID("Test-RG_01", "Identity-A"),
}

func clusterID(resourceGroup, name string) string {
	return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup +
		"/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/" + name
}

func identityID(resourceGroup, name string) string {
	return "/subscriptions/" + subscription + "/resourceGroups/" + resourceGroup +
		"/providers/Microsoft.ManagedIdentity/userAssignedIdentities/" + name
}

// knownUpstreamIDs are literals from upstream's Go tests; the generator refuses to print if its
// uuid5 disagrees with them.
var knownUpstreamIDs = map[string]string{
	armIDs[0]: "7de6e0ae-f384-51a8-97e2-1177ac229b7c",
	armIDs[1]: "68bc6026-a8a9-5706-92c5-25d3313bcabb",
	armIDs[2]: "f7583c84-ae03-56f3-b91d-55bbb849164d",
	armIDs[3]: "718f75e1-6967-5ce1-ab3c-4f991504b7eb",
}

// identityURLs are identity URLs as ARM hands them over (x-ms-identity-url), for the request URL
// upstream's data plane client derives from each (identityURLVector).
var identityURLs = []string{
	"https://control-eastus.identity.azure.net/subscriptions/" + subscription + "/resourcegroups/rg/providers/Microsoft.RedHatOpenShift/hcpOpenShiftClusters/cluster-1/credentials/v2/identities?arpid=5a1b&tid=72f988bf-86f1-41af-91ab-2d7cd011db47&oid=0f0e0d0c&aid=6b1d4c3a",
	"https://control-westus.identity.azure.net/subscriptions/x/credentials?tid=a&arpid=b&oid=c&aid=d&api-version=2023-01-01",
	"https://127.0.0.1:8443/subscriptions/x/resourcegroups/İSTANBUL-RG/credentials/v2/identities/?z=1&a=2&a=1&m=hello+world&q=a%2Fb%3Dc&star=*&tilde=~&bang=!&paren=(x)&empty=&noValue",
	"https://example.identity.azure.net/path%20with%20space/credentials?sig=abc%2B%2F%3D&se=2026-12-03T00%3A00%3A00Z",
	"https://example.identity.azure.net/credentials",
}

// identityLists are identityIds bodies: one identity (the data plane operators' request for the
// service managed identity), several (the MSI sibling's request), and names whose JSON encoding
// differs between Go and JavaScript (Go escapes <, >, &, U+2028 and U+2029).
var identityLists = [][]string{
	{identityID("Test-RG_01", "Identity-A")},
	{identityID("rg", "control-plane"), identityID("rg", "cloud-controller-manager"), identityID("RG", "SMI")},
	{identityID("İSTANBUL-RG", "disk-csi-İ"), identityID("ΟΔΟΣ", "ΤΑΥΤΟΤΗΣ")},
	{identityID("rg<&>", "name\u2028\u2029\"quoted\"")},
}

// dataPlaneRequest is what upstream's own data plane client (github.com/Azure/msi-dataplane, at
// the version ARO-HCP's backend pins) sends for an identity URL and a list of identities: it runs
// the client, with a transport that records the request instead of sending it. Nothing here
// re-implements the client, so a change of its URL or body rules shows up in the vectors.
func dataPlaneRequest(identityURL string, identityIDs []string) (requestURL string, body string) {
	recorder := &recordingTransport{}
	factory := dataplane.NewClientFactory(noCredential{}, "https://dataplane.vectors.invalid", &azcore.ClientOptions{
		Transport: recorder,
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}, dataplane.WithClientLogger(&discardLogger))
	client, err := factory.NewClient(identityURL)
	if err != nil {
		panic(err)
	}
	if _, err := client.GetUserAssignedIdentitiesCredentials(context.Background(), dataplane.UserAssignedIdentitiesRequest{IdentityIDs: identityIDs}); err != nil {
		panic(err)
	}
	if recorder.request == nil {
		panic("the client sent nothing")
	}
	return recorder.request.URL.String(), recorder.body
}

var discardLogger = logr.Discard()

// recordingTransport keeps the request and answers 200 with an empty credentials object, so the
// client's bearer policy never needs a token (the first request goes out without one).
type recordingTransport struct {
	request *http.Request
	body    string
}

func (transport *recordingTransport) Do(request *http.Request) (*http.Response, error) {
	transport.request = request
	if request.Body != nil {
		bytes, err := io.ReadAll(request.Body)
		if err != nil {
			return nil, err
		}
		transport.body = string(bytes)
	}
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": []string{"application/json"}},
		Body:       io.NopCloser(strings.NewReader(`{"explicit_identities":[]}`)),
		Request:    request,
	}, nil
}

// noCredential is never asked: the recording transport answers the unauthenticated request.
type noCredential struct{}

func (noCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	panic("no token is needed to record a request")
}

type identityURLVector struct {
	IdentityURL string `json:"identityUrl"`
	RequestURL  string `json:"requestUrl"`
}

type requestBodyVector struct {
	IdentityIDs []string `json:"identityIds"`
	Body        string   `json:"body"`
}

type textVector struct {
	Input string `json:"input"`
	Lower string `json:"lower"`
}

type armVector struct {
	ArmResourceID string `json:"armResourceId"`
	Lower         string `json:"lower"`
	DocumentID    string `json:"documentId"`
}

type vectors struct {
	Comment        string       `json:"comment"`
	UnicodeVersion string       `json:"unicodeVersion"`
	Namespace      string       `json:"namespace"`
	Text           []textVector `json:"text"`
	ArmResourceIDs []armVector  `json:"armResourceIds"`
	// IdentityURLs are the data plane request URLs of identity URLs (dataPlaneRequest).
	IdentityURLs []identityURLVector `json:"identityUrls"`
	// RequestBodies are the data plane request bodies of identity lists (dataPlaneRequest).
	RequestBodies []requestBodyVector `json:"requestBodies"`
	// MSISubtrees are msiManagedIdentities subtrees as upstream's types encode them (msi.go).
	MSISubtrees []msiCase `json:"msiSubtrees"`
	// LowerCaseMapping is every code point that unicode.ToLower changes, as [from, to]; spliced in
	// by main, one pair a line, to keep the file short and its diffs readable.
	LowerCaseMapping string `json:"lowerCaseMapping"`
}

// uuidVersion5 is RFC 4122 name-based UUID version 5 (SHA-1), as github.com/google/uuid.NewSHA1.
func uuidVersion5(namespace, name string) string {
	namespaceBytes, err := hex.DecodeString(strings.ReplaceAll(namespace, "-", ""))
	if err != nil || len(namespaceBytes) != 16 {
		panic("bad namespace " + namespace)
	}
	hash := sha1.New()
	hash.Write(namespaceBytes)
	hash.Write([]byte(name))
	sum := hash.Sum(nil)[:16]
	sum[6] = (sum[6] & 0x0f) | 0x50
	sum[8] = (sum[8] & 0x3f) | 0x80
	text := hex.EncodeToString(sum)
	return text[0:8] + "-" + text[8:12] + "-" + text[12:16] + "-" + text[16:20] + "-" + text[20:]
}

// lowerCaseMapping sweeps every scalar value and also proves that strings.ToLower is exactly the
// per-code-point unicode.ToLower (so a per-code-point table reproduces it).
func lowerCaseMapping() [][2]rune {
	mapping := [][2]rune{}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue // surrogates: not representable in a Go string
		}
		lower := unicode.ToLower(r)
		if strings.ToLower(string(r)) != string(lower) {
			panic(fmt.Sprintf("strings.ToLower and unicode.ToLower disagree on U+%04X", r))
		}
		if lower != r {
			mapping = append(mapping, [2]rune{r, lower})
		}
	}
	return mapping
}

// run is a compressed stretch of the mapping: count code points from start, stride apart, each
// mapped to itself plus delta.
type run struct{ start, count, stride, delta rune }

func compress(mapping [][2]rune) []run {
	runs := []run{}
	for index := 0; index < len(mapping); {
		best := run{mapping[index][0], 1, 1, mapping[index][1] - mapping[index][0]}
		for _, stride := range []rune{1, 2} {
			candidate := run{best.start, 1, stride, best.delta}
			for next := index + 1; next < len(mapping); next++ {
				from, to := mapping[next][0], mapping[next][1]
				if from != candidate.start+candidate.count*stride || to-from != candidate.delta {
					break
				}
				candidate.count++
			}
			if candidate.count > best.count {
				best = candidate
			}
		}
		runs = append(runs, best)
		index += int(best.count)
	}
	return runs
}

func main() {
	table := flag.Bool("table", false, "print the compressed mapping table for goStrings.ts instead of the vectors")
	decode := flag.Bool("decode", false, "read a ServiceProviderCluster document from stdin and print both status halves as upstream's types decode and encode them")
	flag.Parse()
	if *decode {
		decoded, err := decodeDocument(os.Stdin)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(decoded)
		return
	}
	mapping := lowerCaseMapping()
	if *table {
		printTable(mapping)
		return
	}
	output := vectors{
		Comment:          "Generated by tools/go-vectors (go run .). Do not edit: test/unit/core/goStrings.test.ts re-runs the generator and compares.",
		UnicodeVersion:   unicode.Version,
		Namespace:        resourceIDNamespace,
		LowerCaseMapping: mappingPlaceholder,
	}
	for _, input := range textInputs {
		output.Text = append(output.Text, textVector{input, strings.ToLower(input)})
	}
	for _, id := range armIDs {
		lower := strings.ToLower(id)
		documentID := uuidVersion5(resourceIDNamespace, lower)
		if expected, known := knownUpstreamIDs[id]; known && expected != documentID {
			panic(fmt.Sprintf("uuid5 of %s is %s, upstream says %s", id, documentID, expected))
		}
		output.ArmResourceIDs = append(output.ArmResourceIDs, armVector{id, lower, documentID})
	}
	for _, identityURL := range identityURLs {
		requestURL, _ := dataPlaneRequest(identityURL, []string{identityID("rg", "smi")})
		output.IdentityURLs = append(output.IdentityURLs, identityURLVector{identityURL, requestURL})
	}
	for _, identityIDs := range identityLists {
		_, body := dataPlaneRequest(identityURLs[0], identityIDs)
		output.RequestBodies = append(output.RequestBodies, requestBodyVector{identityIDs, body})
	}
	for _, c := range msiCases {
		c.Subtree = upstreamMSISubtree(c)
		output.MSISubtrees = append(output.MSISubtrees, c)
	}
	var buffer bytes.Buffer
	encoder := json.NewEncoder(&buffer)
	encoder.SetEscapeHTML(false)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(output); err != nil {
		panic(err)
	}
	pairs := make([]string, len(mapping))
	for index, pair := range mapping {
		pairs[index] = fmt.Sprintf("    [%d, %d]", pair[0], pair[1])
	}
	text := strings.Replace(buffer.String(), `"`+mappingPlaceholder+`"`, "[\n"+strings.Join(pairs, ",\n")+"\n  ]", 1)
	os.Stdout.WriteString(text)
}

const mappingPlaceholder = "@lowerCaseMapping@"

// printTable prints the runs as a TypeScript number array literal: start, count, stride, delta.
func printTable(mapping [][2]rune) {
	runs := compress(mapping)
	fmt.Printf("// Generated by tools/go-vectors (go run . -table): Unicode %s, %d code points in %d runs.\n", unicode.Version, len(mapping), len(runs))
	fmt.Println("// Each run is [start, count, stride, delta]: count code points from start, stride apart, each maps to itself + delta.")
	fmt.Println("const lowerCaseRuns: readonly number[] = [")
	for index := 0; index < len(runs); index += 6 {
		parts := []string{}
		for _, current := range runs[index:min(index+6, len(runs))] {
			parts = append(parts, fmt.Sprintf("0x%x, %d, %d, %d", current.start, current.count, current.stride, current.delta))
		}
		fmt.Printf("  %s,\n", strings.Join(parts, ", "))
	}
	fmt.Println("];")
}
