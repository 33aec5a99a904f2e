package securetest_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestDocsListTheCommands: the command list for a limited user in
// docs/operations.md ("Running as a limited Redis user", linked from the
// README) is exactly redistest.LockCommands, what the limited-user tests
// allow, and the section names the cluster's extra commands.
func TestDocsListTheCommands(t *testing.T) {
	const doc = "docs/operations.md"
	text, err := os.ReadFile("../../" + doc)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), "## Running as a limited Redis user")
	if !ok {
		t.Fatalf("%s has no section on running as a limited Redis user", doc)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "```\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatalf("the section of %s has no command list", doc)
	}
	listed := strings.Fields(block)
	want := slices.Clone(redistest.LockCommands)
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("%s lists %v\nthe tests allow %v", doc, listed, want)
	}
	for _, c := range redistest.ClusterCommands {
		if !strings.Contains(section, "`"+c+"`") {
			t.Errorf("%s does not name %s for clusters", doc, c)
		}
	}
}
