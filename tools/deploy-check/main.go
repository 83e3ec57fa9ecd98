// Command deploy-check validates what is deployed on the engines CI cannot start here (Kubernetes,
// the Pulumi Kubernetes Operator, GitHub Actions) with those engines' own code, at pinned versions
// from the Go module proxy (go.mod):
//
//	deploy-check chart <chart directory> <Stack CRD file> [values file…]   render the Helm chart with helm's own engine
//	                                                                        (the release's values as `helm install -f`) and check every manifest
//	deploy-check render <chart directory> [values file…]                   print the rendered manifests
//	deploy-check manifests <Stack CRD file> <YAML file…>                   check manifests given as files
//	deploy-check workflow <workflow file…>                                 actionlint, as its own command runs
//	deploy-check dockerfile <Dockerfile>                                   BuildKit's Dockerfile checks, as `docker build --check` runs them
//
// The checks of a manifest, by its apiVersion and kind:
//   - Kubernetes' own kinds (batch/v1 CronJob, v1 ServiceAccount, ConfigMap) and the Secrets Store CSI
//     driver's SecretProviderClass are decoded strictly into their Go types (k8s.io/api,
//     sigs.k8s.io/secrets-store-csi-driver), as the API server's strict field validation does: an
//     unknown, misspelt or duplicated field fails;
//   - a pulumi.com/v1 Stack is checked against the operator's published CustomResourceDefinition,
//     with the API server's own code (k8s.io/apiextensions-apiserver): its OpenAPI schema validation,
//     and its pruning to find fields the schema does not know;
//   - any other kind fails: the chart deploys only these.
//
// Exit code 1 when a check fails, each failure on its own line naming the object and the field.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	digest "github.com/opencontainers/go-digest"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/rhysd/actionlint"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	secretsstorev1 "sigs.k8s.io/secrets-store-csi-driver/apis/v1"
	"sigs.k8s.io/yaml"
)

const usage = `usage: deploy-check chart <chart directory> <Stack CRD file> [values file...]
       deploy-check render <chart directory> [values file...]
       deploy-check manifests <Stack CRD file> <YAML file...>
       deploy-check workflow <workflow file...>
       deploy-check dockerfile <Dockerfile>`

func main() {
	if len(os.Args) < 2 {
		exit(2, usage)
	}
	arguments := os.Args[2:]
	switch os.Args[1] {
	case "workflow":
		if len(arguments) == 0 {
			exit(2, usage)
		}
		// actionlint's own command line, with its own exit codes (1: problems found). Without shellcheck
		// and pyflakes, which it would run only where they happen to be installed.
		command := actionlint.Command{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
		os.Exit(command.Main(append([]string{"actionlint", "-no-color", "-shellcheck=", "-pyflakes="}, arguments...)))
	case "dockerfile":
		if len(arguments) != 1 {
			exit(2, usage)
		}
		problems, err := lintDockerfile(arguments[0])
		if err != nil {
			exit(1, fmt.Sprintf("%s: %v", arguments[0], err))
		}
		for _, problem := range problems {
			fmt.Println(problem)
		}
		if len(problems) > 0 {
			exit(1, fmt.Sprintf("deploy-check: %d problem(s) in %s", len(problems), arguments[0]))
		}
		fmt.Printf("deploy-check: %s passes BuildKit's checks\n", arguments[0])
	case "render":
		if len(arguments) < 1 {
			exit(2, usage)
		}
		documents, err := renderChart(arguments[0], arguments[1:])
		if err != nil {
			exit(1, err.Error())
		}
		for _, document := range documents {
			fmt.Printf("---\n# Source: %s\n%s\n", document.source, strings.TrimSpace(string(document.content)))
		}
	case "chart", "manifests":
		if len(arguments) < 2 {
			exit(2, usage)
		}
		var documents []document
		var err error
		crdFile := arguments[1]
		if os.Args[1] == "chart" {
			documents, err = renderChart(arguments[0], arguments[2:])
		} else {
			crdFile = arguments[0]
			documents, err = readManifests(arguments[1:])
		}
		if err != nil {
			exit(1, err.Error())
		}
		checker, err := newChecker(crdFile)
		if err != nil {
			exit(1, err.Error())
		}
		failures := 0
		for _, document := range documents {
			for _, problem := range checker.check(document.content) {
				fmt.Printf("%s: %s\n", document.source, problem)
				failures++
			}
		}
		if failures > 0 {
			exit(1, fmt.Sprintf("deploy-check: %d problem(s) in %d manifest(s)", failures, len(documents)))
		}
		fmt.Printf("deploy-check: %d manifest(s) valid\n", len(documents))
	default:
		exit(2, usage)
	}
}

func exit(code int, message string) {
	fmt.Fprintln(os.Stderr, message)
	os.Exit(code)
}

// document is one YAML document: where it came from (a template or a file) and its text.
type document struct {
	source  string
	content []byte
}

// renderChart renders the chart as `helm template` does for a release named after the chart: the
// chart's values.yaml, then each values file over it, then helm's engine in strict mode (a template
// that reads a value the values do not have fails).
func renderChart(chartDirectory string, valuesFiles []string) ([]document, error) {
	chart, err := loader.Load(chartDirectory)
	if err != nil {
		return nil, fmt.Errorf("loading chart %s: %w", chartDirectory, err)
	}
	values := map[string]any{}
	for _, file := range valuesFiles {
		overlay, err := common.ReadValuesFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading values %s: %w", file, err)
		}
		values = util.MergeTables(overlay, values)
	}
	options := common.ReleaseOptions{Name: chart.Metadata.Name, Namespace: "aro-hcp", IsInstall: true, Revision: 1}
	renderValues, err := util.ToRenderValues(chart, values, options, nil)
	if err != nil {
		return nil, fmt.Errorf("values of chart %s: %w", chartDirectory, err)
	}
	rendered, err := engine.Engine{Strict: true}.Render(chart, renderValues)
	if err != nil {
		return nil, fmt.Errorf("rendering chart %s: %w", chartDirectory, err)
	}
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	var documents []document
	for _, name := range names {
		if strings.HasSuffix(name, "NOTES.txt") || strings.HasPrefix(name[strings.LastIndex(name, "/")+1:], "_") {
			continue
		}
		split, err := splitDocuments(name, []byte(rendered[name]))
		if err != nil {
			return nil, err
		}
		documents = append(documents, split...)
	}
	return documents, nil
}

func readManifests(files []string) ([]document, error) {
	var documents []document
	for _, file := range files {
		content, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		split, err := splitDocuments(file, content)
		if err != nil {
			return nil, err
		}
		documents = append(documents, split...)
	}
	return documents, nil
}

// splitDocuments splits a YAML stream; documents holding only comments are dropped.
func splitDocuments(source string, content []byte) ([]document, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	var documents []document
	for {
		chunk, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return documents, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", source, err)
		}
		var probe any
		if err := yaml.Unmarshal(chunk, &probe); err != nil {
			return nil, fmt.Errorf("%s: not YAML: %w", source, err)
		}
		if probe != nil {
			documents = append(documents, document{source: source, content: chunk})
		}
	}
}

// checker decodes manifests strictly, and checks Stacks against the operator's CRD.
type checker struct {
	decoder          runtime.Decoder
	stackVersions    map[string]*apiextensions.JSONSchemaProps
	stackStructurals map[string]*structuralschema.Structural
}

func newChecker(crdFile string) (*checker, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{batchv1.AddToScheme, corev1.AddToScheme, secretsstorev1.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	content, err := os.ReadFile(crdFile)
	if err != nil {
		return nil, fmt.Errorf("reading the Stack CRD: %w", err)
	}
	object, _, err := decoder.Decode(content, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding the Stack CRD %s: %w", crdFile, err)
	}
	crd, ok := object.(*apiextensionsv1.CustomResourceDefinition)
	if !ok || crd.Spec.Group != "pulumi.com" || crd.Spec.Names.Kind != "Stack" {
		return nil, fmt.Errorf("%s is not the pulumi.com Stack CustomResourceDefinition", crdFile)
	}
	result := &checker{decoder: decoder, stackVersions: map[string]*apiextensions.JSONSchemaProps{}, stackStructurals: map[string]*structuralschema.Structural{}}
	for _, version := range crd.Spec.Versions {
		if !version.Served || version.Schema == nil || version.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(version.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, err
		}
		structural, err := structuralschema.NewStructural(internal)
		if err != nil {
			return nil, fmt.Errorf("the CRD's %s schema is not structural: %w", version.Name, err)
		}
		result.stackVersions["pulumi.com/"+version.Name] = internal
		result.stackStructurals["pulumi.com/"+version.Name] = structural
	}
	return result, nil
}

// check returns the problems of one manifest, each naming the object and field.
func (c *checker) check(content []byte) []string {
	var header metav1.TypeMeta
	if err := yaml.Unmarshal(content, &header); err != nil {
		return []string{err.Error()}
	}
	name := func() string {
		var object struct {
			Metadata struct{ Name string } `json:"metadata"`
		}
		_ = yaml.Unmarshal(content, &object)
		return fmt.Sprintf("%s %s", header.Kind, object.Metadata.Name)
	}()
	switch {
	case header.APIVersion == "batch/v1" && header.Kind == "CronJob",
		header.APIVersion == "v1" && (header.Kind == "ServiceAccount" || header.Kind == "ConfigMap"),
		header.APIVersion == "secrets-store.csi.x-k8s.io/v1" && header.Kind == "SecretProviderClass":
		if _, _, err := c.decoder.Decode(content, nil, nil); err != nil {
			return []string{fmt.Sprintf("%s: %v", name, err)}
		}
		return nil
	case header.Kind == "Stack" && c.stackVersions[header.APIVersion] != nil:
		return c.checkStack(name, header.APIVersion, content)
	default:
		return []string{fmt.Sprintf("%s: %s %s is not a kind this chart deploys", name, header.APIVersion, header.Kind)}
	}
}

// checkStack validates a Stack as the API server validates a custom resource on create: its schema
// (types, enums, required fields), fields the schema does not know (pruning, reported as strict field
// validation reports them), and its metadata decoded strictly as an ObjectMeta.
func (c *checker) checkStack(name, apiVersion string, content []byte) []string {
	var object map[string]any
	if err := yaml.UnmarshalStrict(content, &object); err != nil {
		return []string{fmt.Sprintf("%s: %v", name, err)}
	}
	var problems []string
	validator, _, err := validation.NewSchemaValidator(c.stackVersions[apiVersion])
	if err != nil {
		return []string{err.Error()}
	}
	for _, failure := range validation.ValidateCustomResource(nil, object, validator) {
		problems = append(problems, fmt.Sprintf("%s: %s", name, failure.Error()))
	}
	options := structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}
	for _, path := range pruning.PruneWithOptions(object, c.stackStructurals[apiVersion], true, options) {
		problems = append(problems, fmt.Sprintf("%s: unknown field %q", name, path))
	}
	metadata, err := yaml.Marshal(object["metadata"])
	if err == nil {
		var objectMeta metav1.ObjectMeta
		if err := yaml.UnmarshalStrict(metadata, &objectMeta); err != nil {
			problems = append(problems, fmt.Sprintf("%s: metadata: %v", name, err))
		}
	}
	return problems
}

// offlineImages answers every base image with an empty Linux image config instead of asking a
// registry (none is reachable here): the rules that read a base image's config have nothing to find.
type offlineImages struct{}

func (offlineImages) ResolveImageConfig(_ context.Context, ref string, _ sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	return ref, "", []byte(`{"architecture":"amd64","os":"linux","rootfs":{"type":"layers"},"config":{}}`), nil
}

// lintDockerfile runs BuildKit's Dockerfile frontend over the file as `docker build --check` does
// (dockerfile2llb.DockerfileLint: the parser, every instruction's arguments, and the lint rules),
// without a daemon and without a registry (offlineImages). A parse error (an unknown instruction, a bad
// flag) is the error; each rule's finding is a problem naming its line.
func lintDockerfile(file string) ([]string, error) {
	content, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	platform := ocispecs.Platform{OS: "linux", Architecture: "amd64"}
	sourceMap := llb.NewSourceMap(nil, file, "Dockerfile", content)
	sourceMap.Definition = &llb.Definition{}
	results, err := dockerfile2llb.DockerfileLint(context.Background(), content, dockerfile2llb.ConvertOpt{
		SourceMap:      sourceMap,
		TargetPlatform: &platform,
		MetaResolver:   offlineImages{},
	})
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, warning := range results.Warnings {
		line := 0
		if warning.Location != nil && len(warning.Location.Ranges) > 0 {
			line = int(warning.Location.Ranges[0].Start.Line)
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", file, line, warning.RuleName, warning.Detail))
	}
	if results.Error != nil {
		problems = append(problems, fmt.Sprintf("%s: %s", file, results.Error.Message))
	}
	return problems, nil
}
