package securetest_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/redistest"
)

// TestREADMEListsTheCommands: the README's command list for a limited
// user is exactly redistest.LockCommands, what the limited-user tests
// allow, and it names the cluster's extra commands.
func TestREADMEListsTheCommands(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## Running as a limited Redis user")
	if !ok {
		t.Fatal("README has no section on running as a limited Redis user")
	}
	_, block, ok := strings.Cut(section, "```\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("the section has no command list")
	}
	listed := strings.Fields(block)
	want := slices.Clone(redistest.LockCommands)
	slices.Sort(listed)
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("README lists %v\nthe tests allow %v", listed, want)
	}
	for _, c := range redistest.ClusterCommands {
		if !strings.Contains(section, "`"+c+"`") {
			t.Errorf("README does not name %s for clusters", c)
		}
	}
}
