// Package election is a stub of the real package's API for the analyzer's tests.
package election

import (
	"context"
	"time"
)

type Election struct{}

func (e *Election) Campaign(ctx context.Context, value string) (context.Context, error) {
	return ctx, nil
}
func (e *Election) TryCampaign(ctx context.Context, value string, wait time.Duration) (context.Context, error) {
	return ctx, nil
}
func (e *Election) Resign(ctx context.Context) error { return nil }
