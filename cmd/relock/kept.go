package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/relock-go/relock/inspect"
)

// keptThings names the kinds of inspect.Report.Kept, in the order
// printed.
var keptThings = []struct {
	kind  inspect.Kind
	thing string
}{
	{inspect.KindFencing, "fencing counter"},
	{inspect.KindFence, "fence token"},
	{inspect.KindElection, "election term"},
}

// writeKept prints, as information and not a problem, how many records
// found stay for good by design and what they cost:
// "3 fencing counters, 1 election term kept for good (~90 B each; see
// docs/state.md)". It prints nothing when there are none.
func writeKept(w io.Writer, kept map[inspect.Kind]int) error {
	var parts []string
	for _, k := range keptThings {
		if n := kept[k.kind]; n > 0 {
			parts = append(parts, count(n, k.thing))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "%s kept for good (~%d B each; see docs/state.md)\n", strings.Join(parts, ", "), inspect.KeptBytes)
	return err
}
