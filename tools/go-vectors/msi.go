package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	azcorearm "github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The JSON shape of upstream's ServiceProviderCluster status halves: a mirror of the types of
// internal/api/coreapi/types_serviceprovider_cluster.go at ARO-HCP c3f02f9e (upstream's modules are
// not served by the Go module proxy, so they cannot be imported): the same field names, JSON tags,
// omitempty, pointer-ness and Go types (azcorearm.ResourceID, metav1.Time), so that encoding/json
// writes here exactly what upstream's backend writes.
type msiManagedIdentities struct {
	EarliestRecheckTime             *metav1.Time                             `json:"earliestRecheckTime,omitempty"`
	ControlPlaneOperatorsIdentities map[string]*controlPlaneOperatorIdentity `json:"controlPlaneOperatorsIdentities,omitempty"`
	ServiceManagedIdentity          *serviceManagedIdentity                  `json:"serviceManagedIdentity,omitempty"`
}

type controlPlaneOperatorIdentity struct {
	ResourceID  *azcorearm.ResourceID `json:"resourceId,omitempty"`
	ClientID    *string               `json:"clientId,omitempty"`
	PrincipalID *string               `json:"principalId,omitempty"`
}

type serviceManagedIdentity struct {
	ResourceID  *azcorearm.ResourceID `json:"resourceId,omitempty"`
	ClientID    *string               `json:"clientId,omitempty"`
	PrincipalID *string               `json:"principalId,omitempty"`
}

// msiCase is a cluster's declared identities, the data plane's answer and the clock of one pass.
type msiCase struct {
	Name                   string            `json:"name"`
	ControlPlaneOperators  map[string]string `json:"controlPlaneOperators"`
	ServiceManagedIdentity string            `json:"serviceManagedIdentity"`
	// Answer: resource_id, client_id and object_id of each entry (nil is JSON null).
	Answer []msiAnswerEntry `json:"answer"`
	Now    string           `json:"now"`
	Random float64          `json:"random"`
	// Subtree is what upstream's controller writes for this case, as Go encodes it.
	Subtree string `json:"subtree"`
}

type msiAnswerEntry struct {
	ResourceID string  `json:"resourceId"`
	ClientID   *string `json:"clientId"`
	ObjectID   *string `json:"objectId"`
}

func text(value string) *string { return &value }

var msiCases = []msiCase{
	{
		Name: "mixed-case IDs, an answer in another order and casing, an empty and a null value",
		ControlPlaneOperators: map[string]string{
			"cloud-controller-manager": identityID("Test-RG_01", "CCM-Identity"),
			"control-plane":            "/SUBSCRIPTIONS/" + subscription + "/ResourceGroups/Test-RG_01/PROVIDERS/Microsoft.ManagedIdentity/userAssignedIdentities/Control-Plane",
			"ingress":                  identityID("Test-RG_01", "ingress"),
		},
		ServiceManagedIdentity: identityID("Test-RG_01", "Service-Managed"),
		Answer: []msiAnswerEntry{
			{strings.ToUpper(identityID("Test-RG_01", "Service-Managed")), text("11111111-1111-1111-1111-111111111111"), text("22222222-2222-2222-2222-222222222222")},
			{strings.ToLower(identityID("Test-RG_01", "ingress")), nil, nil},
			{identityID("test-rg_01", "control-plane"), text(""), text("33333333-3333-3333-3333-333333333333")},
			{identityID("Test-RG_01", "CCM-Identity"), text("44444444-4444-4444-4444-444444444444"), text("55555555-5555-5555-5555-555555555555")},
		},
		Now:    "2026-08-14T12:00:00Z",
		Random: 0.25,
	},
	{
		Name:                   "no control plane operators, names Go and JavaScript lowercase and sort differently",
		ControlPlaneOperators:  map[string]string{},
		ServiceManagedIdentity: identityID("İSTANBUL-RG", "ΣΊΣΥΦΟΣ"),
		Answer:                 []msiAnswerEntry{{identityID("İSTANBUL-RG", "ΣΊΣΥΦΟΣ"), text("a"), text("b")}},
		Now:                    "2026-12-03T23:59:59Z",
		Random:                 0.999999,
	},
	{
		Name: "two operators naming one identity, and keys whose UTF-8 order differs from UTF-16 order",
		ControlPlaneOperators: map[string]string{
			"a": identityID("rg", "shared"),
			"b": identityID("rg", "shared"),
			"c": identityID("rg", "\uff41-fullwidth"),
			"d": identityID("rg", "\U0001d4d0-script"),
		},
		ServiceManagedIdentity: identityID("rg", "smi"),
		Answer: []msiAnswerEntry{
			{identityID("rg", "shared"), text("c1"), text("p1")},
			{identityID("rg", "\uff41-fullwidth"), text("c2"), text("p2")},
			{identityID("rg", "\U0001d4d0-script"), text("c3"), text("p3")},
			{identityID("rg", "smi"), text("c4"), text("p4")},
		},
		Now:    "2026-01-31T00:00:00Z",
		Random: 0,
	},
}

// upstreamMSISubtree follows FetchMSIIdentitiesInfo's SyncOnce for a complete answer: keys are
// strings.ToLower of the parsed ID's String(), each entry's resourceId is the parsed ID, client and
// principal IDs are the answer's pointers, and the recheck time is now + wait.Jitter(12h, 0.5).
func upstreamMSISubtree(c msiCase) string {
	parse := func(id string) *azcorearm.ResourceID {
		parsed, err := azcorearm.ParseResourceID(id)
		if err != nil {
			panic(err)
		}
		return parsed
	}
	answers := map[string]msiAnswerEntry{}
	for _, entry := range c.Answer {
		answers[strings.ToLower(entry.ResourceID)] = entry
	}
	subtree := msiManagedIdentities{ControlPlaneOperatorsIdentities: map[string]*controlPlaneOperatorIdentity{}}
	for _, id := range c.ControlPlaneOperators {
		resourceID := parse(id)
		key := strings.ToLower(resourceID.String())
		answer := answers[key]
		subtree.ControlPlaneOperatorsIdentities[key] = &controlPlaneOperatorIdentity{ResourceID: resourceID, ClientID: answer.ClientID, PrincipalID: answer.ObjectID}
	}
	smi := parse(c.ServiceManagedIdentity)
	answer := answers[strings.ToLower(smi.String())]
	subtree.ServiceManagedIdentity = &serviceManagedIdentity{ResourceID: smi, ClientID: answer.ClientID, PrincipalID: answer.ObjectID}
	now, err := time.Parse(time.RFC3339, c.Now)
	if err != nil {
		panic(err)
	}
	interval := 12 * time.Hour
	recheck := metav1.NewTime(now.Add(interval + time.Duration(c.Random*0.5*float64(interval))))
	subtree.EarliestRecheckTime = &recheck
	encoded, err := json.Marshal(subtree)
	if err != nil {
		panic(err)
	}
	return string(encoded)
}

type dataPlaneOperatorsManagedIdentities struct {
	Identities          map[string]*dataPlaneOperatorManagedIdentity `json:"identities,omitempty"`
	EarliestRecheckTime *metav1.Time                                 `json:"earliestRecheckTime,omitempty"`
}

type dataPlaneOperatorManagedIdentity struct {
	ResourceID     *azcorearm.ResourceID `json:"resourceID,omitempty"`
	ClientID       *string               `json:"clientId,omitempty"`
	PrincipalID    *string               `json:"principalId,omitempty"`
	RetrievalError *string               `json:"retrievalError,omitempty"`
}

// decodedStatus is what upstream's reader makes of a ServiceProviderCluster document's two halves,
// encoded again. Both are decoded strictly: a field upstream's types lack is an error, since the
// hook writes no field of its own (upstream's typed decode would drop one).
type decodedStatus struct {
	MSIManagedIdentities                json.RawMessage `json:"msiManagedIdentities"`
	DataPlaneOperatorsManagedIdentities json.RawMessage `json:"dataPlaneOperatorsManagedIdentities"`
}

// decodeDocument reads a ServiceProviderCluster document from stdin and prints decodedStatus.
func decodeDocument(input io.Reader) ([]byte, error) {
	var document struct {
		Properties struct {
			Status struct {
				MSIManagedIdentities                json.RawMessage `json:"msiManagedIdentities"`
				DataPlaneOperatorsManagedIdentities json.RawMessage `json:"dataPlaneOperatorsManagedIdentities"`
			} `json:"status"`
		} `json:"properties"`
	}
	if err := json.NewDecoder(input).Decode(&document); err != nil {
		return nil, err
	}
	var msi msiManagedIdentities
	strict := json.NewDecoder(bytes.NewReader(document.Properties.Status.MSIManagedIdentities))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&msi); err != nil {
		return nil, fmt.Errorf("msiManagedIdentities: %w", err)
	}
	var dataPlane dataPlaneOperatorsManagedIdentities
	strictDataPlane := json.NewDecoder(bytes.NewReader(document.Properties.Status.DataPlaneOperatorsManagedIdentities))
	strictDataPlane.DisallowUnknownFields()
	if err := strictDataPlane.Decode(&dataPlane); err != nil {
		return nil, fmt.Errorf("dataPlaneOperatorsManagedIdentities: %w", err)
	}
	msiJSON, err := json.Marshal(msi)
	if err != nil {
		return nil, err
	}
	dataPlaneJSON, err := json.Marshal(dataPlane)
	if err != nil {
		return nil, err
	}
	return json.Marshal(decodedStatus{msiJSON, dataPlaneJSON})
}
