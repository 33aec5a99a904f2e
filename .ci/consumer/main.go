// Command consumer is what CI (.ci/run) builds outside the repository,
// as a user's module: it requires github.com/relock-go/relock and its
// relockotel module from a module proxy, at their versions, with no replace of
// its own. It wires the two together and checks that the Observer's
// instrumentation scope has the version the build resolved.
package main

import (
	"fmt"
	"os"
	"runtime/debug"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/relockotel"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "consumer:", err)
		os.Exit(1)
	}
}

func run() error {
	obs, err := relockotel.New(nil)
	if err != nil {
		return err
	}
	// Nothing is sent: no lock is taken.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	rc, err := relock.New(rdb, &relock.Options{Observer: obs})
	if err != nil {
		return err
	}
	defer rc.Close()
	stop, err := obs.Watch(rc)
	if err != nil {
		return err
	}
	if err := stop(); err != nil {
		return err
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("no build info")
	}
	for _, m := range info.Deps {
		if m.Path == "github.com/relock-go/relock/relockotel" {
			if m.Version != "v"+relockotel.Version {
				return fmt.Errorf("relock/relockotel %s reports version %s", m.Version, relockotel.Version)
			}
			fmt.Printf("relock/relockotel %s: scope version %s\n", m.Version, relockotel.Version)
			return nil
		}
	}
	return fmt.Errorf("relock/relockotel not among the build's modules")
}
