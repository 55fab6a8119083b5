package ship

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// includeEntry is one item of a GitLab `include:` list, in the forms docs/ship.md documents.
type includeEntry struct {
	Component string            `yaml:"component"`
	Remote    string            `yaml:"remote"`
	Project   string            `yaml:"project"`
	Ref       string            `yaml:"ref"`
	File      string            `yaml:"file"`
	Inputs    map[string]string `yaml:"inputs"`
}

// yamlBlocks returns the ```yaml blocks of a Markdown section (from its heading line to the
// next heading of the same or a higher level).
func yamlBlocks(t *testing.T, doc, heading string) []string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no %q section", heading)
	}
	sec := doc[i+1+len(heading):]
	level := strings.Repeat("#", strings.Count(strings.Fields(heading)[0], "#"))
	for _, l := range []string{"#", "##", "###", "####"} {
		if len(l) > len(level) {
			break
		}
		if j := strings.Index(sec, "\n"+l+" "); j >= 0 {
			sec = sec[:j]
		}
	}
	var blocks []string
	for {
		s := strings.Index(sec, "```yaml\n")
		if s < 0 {
			return blocks
		}
		sec = sec[s+len("```yaml\n"):]
		e := strings.Index(sec, "```")
		if e < 0 {
			t.Fatalf("%s: unterminated yaml block", heading)
		}
		blocks = append(blocks, sec[:e])
		sec = sec[e:]
	}
}

// releaseVersion is the VERSION file's release (vX.Y.Z).
func releaseVersion(t *testing.T) string {
	t.Helper()
	v := strings.TrimSpace(readFile(t, filepath.Join(root, "VERSION")))
	if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Fatalf("VERSION = %q, want vX.Y.Z", v)
	}
	return v
}

// templateOf resolves one include to the repository file it names, with the ref it names it at
// (the form's own rule for each: a component path's last element is templates/<name>.yml, a
// remote URL is a raw file of the forgectx repository, a project include names its file).
func templateOf(e includeEntry) (file, ref, form string, err error) {
	switch {
	case e.Component != "":
		at := strings.LastIndex(e.Component, "@")
		if at < 0 || !strings.HasPrefix(e.Component, "$CI_SERVER_FQDN/") {
			return "", "", "", fmt.Errorf("component %q: want $CI_SERVER_FQDN/<project path>/<name>@<ref>", e.Component)
		}
		path, r := e.Component[:at], e.Component[at+1:]
		if strings.Count(path, "/") < 3 {
			return "", "", "", fmt.Errorf("component %q: want a project path of at least two parts before the name", e.Component)
		}
		return "templates/" + path[strings.LastIndex(path, "/")+1:] + ".yml", r, "component", nil
	case e.Remote != "":
		u, err := url.Parse(e.Remote)
		if err != nil || u.Scheme != "https" || u.Host != "raw.githubusercontent.com" {
			return "", "", "", fmt.Errorf("remote %q: want an https raw.githubusercontent.com URL", e.Remote)
		}
		parts := strings.SplitN(strings.TrimPrefix(u.Path, "/"), "/", 4)
		if len(parts) != 4 || parts[0] != "forgectx" || parts[1] != "forgectx" {
			return "", "", "", fmt.Errorf("remote %q: want /forgectx/forgectx/<ref>/<file>", e.Remote)
		}
		return parts[3], parts[2], "remote", nil
	case e.Project != "":
		if e.Ref == "" || e.File == "" {
			return "", "", "", fmt.Errorf("project %q: ref and file are required", e.Project)
		}
		return strings.TrimPrefix(e.File, "/"), e.Ref, "project", nil
	}
	return "", "", "", fmt.Errorf("an include with none of component, remote, project")
}

// checkInclude checks one documented include against the template it names: the file exists,
// the ref is the release in VERSION (a component ref may drop the v: GitLab's catalog tags are
// X.Y.Z), every input is declared and valid for its options or regex, every input without a
// default is given. It returns the form and the problems found.
func checkInclude(t *testing.T, e includeEntry, version string) (form string, problems []string) {
	t.Helper()
	file, ref, form, err := templateOf(e)
	if err != nil {
		return "", []string{err.Error()}
	}
	if ref != version && (form != "component" || "v"+ref != version) {
		problems = append(problems, fmt.Sprintf("%s include of %s at %q: want the release in VERSION (%s)", form, file, ref, version))
	}
	if _, err := os.Stat(filepath.Join(root, file)); err != nil {
		return form, append(problems, fmt.Sprintf("%s include names %s, which the repository does not hold", form, file))
	}
	spec, _ := loadComponentFile(t, file)
	names := make([]string, 0, len(e.Inputs))
	for name := range e.Inputs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		v := e.Inputs[name]
		in, ok := spec.Spec.Inputs[name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s include of %s: input %q is not declared by the template", form, file, name))
		case len(in.Options) > 0 && !contains(in.Options, v):
			problems = append(problems, fmt.Sprintf("%s include of %s: input %s=%q is not one of %v", form, file, name, v, in.Options))
		case in.Regex != "" && !regexp.MustCompile(in.Regex).MatchString(v):
			problems = append(problems, fmt.Sprintf("%s include of %s: input %s=%q does not match %s", form, file, name, v, in.Regex))
		}
	}
	var required []string
	for name, in := range spec.Spec.Inputs {
		if in.Default == nil {
			required = append(required, name)
		}
	}
	sort.Strings(required)
	for _, name := range required {
		if _, ok := e.Inputs[name]; !ok {
			problems = append(problems, fmt.Sprintf("%s include of %s: required input %q is not given", form, file, name))
		}
	}
	return form, problems
}

// TestSelfManagedGitLabIncludes: the component path $CI_SERVER_FQDN/forgectx/forgectx/… resolves
// only where forgectx is hosted at that path, so docs/ship.md documents both ways for a
// self-managed instance — a mirrored project's component, and the template included as a file
// (include:remote and include:project). Every include it documents names a template file
// that exists, at the release in VERSION, with inputs the template declares (every required one
// given, options and regexes met). The templates must interpolate only inputs: a
// $[[ component.* ]] would not resolve when the file is included rather than a component.
func TestSelfManagedGitLabIncludes(t *testing.T) {
	version := releaseVersion(t)
	doc := readFile(t, filepath.Join(root, "docs", "ship.md"))
	forms := map[string]int{}
	mirrored := false
	for _, block := range yamlBlocks(t, doc, "### On a self-managed GitLab instance") {
		var pipeline struct {
			Include []includeEntry `yaml:"include"`
		}
		dec := yaml.NewDecoder(bytes.NewReader([]byte(block)))
		if err := dec.Decode(&pipeline); err != nil {
			t.Fatalf("docs/ship.md yaml block: %v\n%s", err, block)
		}
		for _, e := range pipeline.Include {
			form, problems := checkInclude(t, e, version)
			for _, p := range problems {
				t.Errorf("docs/ship.md: %s", p)
			}
			forms[form]++
			if form == "component" && !strings.HasPrefix(e.Component, "$CI_SERVER_FQDN/forgectx/forgectx/") {
				mirrored = true
			}
		}
	}
	if !mirrored {
		t.Errorf("docs/ship.md documents no component include from a mirrored project (a path other than forgectx/forgectx)")
	}
	for _, want := range []string{"remote", "project"} {
		if forms[want] == 0 {
			t.Errorf("docs/ship.md documents no include:%s of the template", want)
		}
	}
	for _, tmpl := range []string{"templates/forgectx.yml", "templates/review-context.yml"} {
		if strings.Contains(readFile(t, filepath.Join(root, tmpl)), "$[[ component.") {
			t.Errorf("%s interpolates $[[ component.* ]], which an include:remote or include:project cannot resolve", tmpl)
		}
	}
}

// TestCheckIncludeRefusesWhatGitLabWould: the include checker is not vacuous — each defect a
// copied include could have is reported.
func TestCheckIncludeRefusesWhatGitLabWould(t *testing.T) {
	version := releaseVersion(t)
	good := map[string]string{"version": version, "harness": ".gitlab/forgectx/triage.yml"}
	cases := []struct {
		name string
		e    includeEntry
		want string
	}{
		{"missing template", includeEntry{Remote: "https://raw.githubusercontent.com/forgectx/forgectx/" + version + "/templates/nope.yml", Inputs: good}, "does not hold"},
		{"another release", includeEntry{Project: "tools/forgectx", Ref: "v0.9.9", File: "templates/forgectx.yml", Inputs: good}, "want the release in VERSION"},
		{"undeclared input", includeEntry{Component: "$CI_SERVER_FQDN/tools/forgectx/forgectx@" + version, Inputs: map[string]string{"version": version, "harness": "h", "agent": "x"}}, `input "agent" is not declared`},
		{"required not given", includeEntry{Component: "$CI_SERVER_FQDN/tools/forgectx/forgectx@" + version, Inputs: map[string]string{"version": version}}, `required input "harness"`},
		{"regex not met", includeEntry{Project: "tools/forgectx", Ref: version, File: "templates/forgectx.yml", Inputs: map[string]string{"version": "1.0", "harness": "h"}}, "does not match"},
		{"option not met", includeEntry{Project: "tools/forgectx", Ref: version, File: "templates/forgectx.yml", Inputs: map[string]string{"version": version, "harness": "h", "forge": "gitea"}}, "is not one of"},
		{"foreign remote", includeEntry{Remote: "https://example.com/forgectx.yml", Inputs: good}, "raw.githubusercontent.com"},
		{"project without ref", includeEntry{Project: "tools/forgectx", File: "templates/forgectx.yml", Inputs: good}, "ref and file are required"},
	}
	for _, c := range cases {
		_, problems := checkInclude(t, c.e, version)
		if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), c.want) {
			t.Errorf("%s: problems %q, want one containing %q", c.name, problems, c.want)
		}
	}
	if form, problems := checkInclude(t, includeEntry{Project: "tools/forgectx", Ref: version, File: "templates/forgectx.yml", Inputs: good}, version); form != "project" || len(problems) != 0 {
		t.Errorf("a correct include: form %q, problems %q", form, problems)
	}
}

// TestReadmeComponentsSection: the install page's Components section counts the components the
// project ships (one template each under templates/) and its table lists every input of the
// forgectx component, no more (artifacts-dir was once left out).
func TestReadmeComponentsSection(t *testing.T) {
	doc := readFile(t, filepath.Join(root, installDoc))
	i := strings.Index(doc, "\n## Components\n")
	if i < 0 {
		t.Fatalf("%s has no ## Components section", installDoc)
	}
	sec := doc[i+1:]
	sec = sec[:strings.Index(sec[1:], "\n## ")+1]
	templates, err := filepath.Glob(filepath.Join(root, "templates", "*.yml"))
	must(t, err)
	words := map[int]string{1: "one", 2: "two", 3: "three", 4: "four"}
	if want := "catalog project with " + words[len(templates)] + " component"; !strings.Contains(sec, want) {
		t.Errorf("%s ## Components does not say %q (templates/ holds %d)", installDoc, want, len(templates))
	}
	for _, tmpl := range templates {
		name := strings.TrimSuffix(filepath.Base(tmpl), ".yml")
		if !strings.Contains(sec, "`"+name+"`") && !strings.Contains(sec, "### "+name+"\n") {
			t.Errorf("%s ## Components does not name the %s component", installDoc, name)
		}
	}
	spec, _ := loadComponentFile(t, componentPath)
	listed := map[string]bool{}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, f := range strings.Split(first, ",") {
			listed[strings.Trim(strings.TrimSpace(f), "`")] = true
		}
	}
	for name := range spec.Spec.Inputs {
		if !listed[name] {
			t.Errorf("%s's component table leaves out the input %q", installDoc, name)
		}
	}
	for name := range listed {
		if _, ok := spec.Spec.Inputs[name]; !ok {
			t.Errorf("%s's component table lists %q, which templates/forgectx.yml does not declare", installDoc, name)
		}
	}
}
