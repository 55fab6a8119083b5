package ship

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// nodeActions is the Node.js major each JavaScript action the workflows pin runs on: its
// action.yml's `runs.using` at that commit (actions/checkout moved to node24 in v5). A new pin
// must be added here with its runtime, so a container job is checked against it.
var nodeActions = map[string]int{
	"actions/checkout@de0fac2e4500dabe0009e67214ff5f5447ce83dd": 24, // v6.0.2: using node24
}

// debianNodeJS is the Node.js major Debian's `nodejs` package installs, per release.
var debianNodeJS = map[string]int{"bookworm": 18, "trixie": 20}

var (
	nodeImage   = regexp.MustCompile(`^(?:docker\.io/)?(?:library/)?node:(\d+)(?:[.-]|$)`)
	debianImage = regexp.MustCompile(`^(?:docker\.io/)?(?:library/)?debian:([a-z]+)`)
	aptNodeJS   = regexp.MustCompile(`apt-get install[^\n]*\snodejs(\s|$)`)
)

// containerNode returns the Node.js major a container job runs its JavaScript actions with:
// the official node image's tag, else Debian's nodejs when a step installs it, else 0.
func containerNode(image string, steps []string) (int, string) {
	if m := nodeImage.FindStringSubmatch(image); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, "the image " + image
	}
	if m := debianImage.FindStringSubmatch(image); m != nil {
		for _, s := range steps {
			if aptNodeJS.MatchString(s) {
				return debianNodeJS[m[1]], "Debian " + m[1] + "'s nodejs"
			}
		}
	}
	return 0, "no Node.js in " + image
}

// TestContainerJobsRunTheirNodeActions: a workflow job in a container (the Forgejo example, and
// the install page's copy of it) runs JavaScript actions with the container's Node.js, so that Node.js
// must be at least the version each pinned action runs on. Debian bookworm's nodejs (18) cannot
// run actions/checkout v6 (node24).
func TestContainerJobsRunTheirNodeActions(t *testing.T) {
	docs := map[string]string{"examples/forgejo/forgectx.yml": readFile(t, filepath.Join(root, "examples", "forgejo", "forgectx.yml"))}
	doc := readFile(t, filepath.Join(root, installDoc))
	i := strings.Index(doc, "\n## Forgejo\n")
	if i < 0 {
		t.Fatalf("%s has no ## Forgejo section", installDoc)
	}
	block := doc[i:]
	block = block[strings.Index(block, "```yaml\n")+len("```yaml\n"):]
	docs[installDoc+" ## Forgejo"] = block[:strings.Index(block, "```")]
	containerJobs := 0
	for name, doc := range docs {
		var wf struct {
			Jobs map[string]struct {
				Container struct {
					Image string `yaml:"image"`
				} `yaml:"container"`
				Steps []struct {
					Uses string `yaml:"uses"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		if err := yaml.Unmarshal([]byte(doc), &wf); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for job, j := range wf.Jobs {
			if j.Container.Image == "" {
				continue
			}
			containerJobs++
			var runs []string
			for _, s := range j.Steps {
				runs = append(runs, s.Run)
			}
			have, from := containerNode(j.Container.Image, runs)
			for _, s := range j.Steps {
				if s.Uses == "" || strings.Contains(s.Uses, "forgectx/forgectx@") { // forgectx's action is composite
					continue
				}
				ref := strings.TrimPrefix(strings.TrimPrefix(s.Uses, "https://github.com/"), "https://code.forgejo.org/")
				need, ok := nodeActions[ref]
				if !ok {
					t.Errorf("%s job %s: %s is not in nodeActions: add the Node.js major its action.yml runs on", name, job, s.Uses)
					continue
				}
				if have < need {
					t.Errorf("%s job %s: %s runs on node%d, but the job has Node.js %d (%s)", name, job, s.Uses, need, have, from)
				}
			}
		}
	}
	if containerJobs < 2 {
		t.Fatalf("found %d container jobs, want the Forgejo example and the install page's copy", containerJobs)
	}
	// The rule itself: the old example's Debian bookworm nodejs is refused.
	if have, _ := containerNode("docker.io/library/debian:bookworm", []string{"apt-get install -y -qq --no-install-recommends ca-certificates curl git jq nodejs"}); have >= 24 {
		t.Errorf("Debian bookworm's nodejs counted as Node.js %d", have)
	}
}
