package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

func main() {
	// go-redis logs some failures itself; relock reports each error once,
	// on one line.
	redis.SetLogger(quiet{})
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// A usageError is a mistake in the command line: exit status 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// run runs the command line args and returns the exit status: 0, 1 when
// the command failed, 2 for bad usage (an invalid lock name included).
// Errors go to stderr on one line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, &env{in: stdin, out: stdout, errs: stderr, opts: defaults()})
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "relock: "+strings.Join(strings.Fields(err.Error()), " "))
	if errors.As(err, new(usageError)) || errors.Is(err, relock.ErrInvalidName) {
		return 2
	}
	return 1
}

// env is what a command runs with.
type env struct {
	in        io.Reader
	out, errs io.Writer
	opts      *options
	rdb       redis.UniversalClient
	cluster   bool // rdb is a *redis.ClusterClient
}

// A command is one of relock's subcommands.
type command struct {
	name     string
	args     string                             // its arguments, for usage
	summary  string                             // what it does, wrapped at 72 columns
	min, max int                                // how many arguments it takes
	flags    func(fs *flag.FlagSet, o *options) // its own flags, if any
	run      func(ctx context.Context, e *env, args []string) error
}

var commands = []*command{
	{name: "inspect", args: "NAME", min: 1, max: 1, run: inspectCmd, summary: `Show who holds lock NAME and how many times, its TTL, a read/write
lock's mode and readers with their leases, a fair lock's queue with
deadlines, relock's registered waiters and a fencing counter, read in
one script.`},
	{name: "list", args: "[PATTERN]", max: 1, flags: listFlags, run: listCmd, summary: `List the lock records whose names match PATTERN (a SCAN glob,
default *), found with SCAN on every master of a cluster.`},
	{name: "watch", args: "NAME", min: 1, max: 1, flags: watchFlags, run: watchCmd, summary: `Show lock NAME, and again whenever it changes (on its channels'
messages, and every -interval), until interrupted.`},
	{name: "force-unlock", args: "NAME", min: 1, max: 1, flags: forceFlags, run: forceCmd, summary: `Delete lock NAME whoever holds it and wake its waiters, through the
lock type's own ForceUnlock, after asking for confirmation.`},
}

// dispatch parses the command line and runs the command. Flags may come
// before the command, after it, and between its arguments.
func dispatch(ctx context.Context, args []string, e *env) error {
	root := newFlagSet("relock")
	connFlags(root, e.opts)
	if err := root.Parse(args); err != nil {
		return helpOr(err, e.out, "")
	}
	rest := root.Args()
	if len(rest) == 0 {
		return usagef("no command given (see relock -h)")
	}
	if rest[0] == "help" {
		if len(rest) > 2 {
			return usagef("help takes one command at most")
		}
		topic := ""
		if len(rest) == 2 {
			topic = rest[1]
		}
		return help(e.out, topic)
	}
	cmd := find(rest[0])
	if cmd == nil {
		return usagef("unknown command %q (see relock -h)", rest[0])
	}
	fs := newFlagSet("relock " + cmd.name)
	connFlags(fs, e.opts)
	if cmd.flags != nil {
		cmd.flags(fs, e.opts)
	}
	pos, err := parseInterleaved(fs, rest[1:])
	if err != nil {
		return helpOr(err, e.out, cmd.name)
	}
	if len(pos) < cmd.min || len(pos) > cmd.max {
		return usagef("usage: relock %s [flags] %s (see relock help %s)", cmd.name, cmd.args, cmd.name)
	}
	if err := e.opts.check(); err != nil {
		return err
	}
	rdb, cluster, err := e.opts.connect(ctx)
	if err != nil {
		return err
	}
	defer rdb.Close()
	e.rdb, e.cluster = rdb, cluster
	return cmd.run(ctx, e, pos)
}

func find(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// newFlagSet returns a flag set that reports errors to dispatch rather
// than printing them.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// helpOr turns a flag parse error into the help for -h, or a usage error.
func helpOr(err error, out io.Writer, topic string) error {
	if errors.Is(err, flag.ErrHelp) {
		return help(out, topic)
	}
	see := "relock -h"
	if topic != "" {
		see = "relock help " + topic
	}
	return usagef("%v (see %s)", err, see)
}

// parseInterleaved parses flags anywhere among args and returns the
// other arguments. Everything after "--" is an argument.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// help writes the full help, or a command's.
func help(out io.Writer, topic string) error {
	if topic == "" {
		_, err := io.WriteString(out, usage())
		return err
	}
	cmd := find(topic)
	if cmd == nil {
		return usagef("unknown command %q (see relock -h)", topic)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Usage: relock %s [flags] %s\n\n%s\n", cmd.name, cmd.args, cmd.summary)
	if cmd.flags != nil {
		b.WriteString("\nFlags of " + cmd.name + ":\n")
		b.WriteString(defaultsOf(cmd.flags))
	}
	b.WriteString("\nConnection and output flags:\n")
	b.WriteString(defaultsOf(connFlags))
	_, err := out.Write(b.Bytes())
	return err
}

// usage is the full help: every command and every flag.
func usage() string {
	var b bytes.Buffer
	b.WriteString(`relock inspects and releases relock's and Redisson's locks in Redis.

Usage:
  relock [flags] COMMAND [flags] [ARGS]

Commands:
`)
	for _, c := range commands {
		fmt.Fprintf(&b, "  %s %s\n      %s\n", c.name, c.args, strings.ReplaceAll(c.summary, "\n", "\n      "))
	}
	b.WriteString("  help [COMMAND]\n      Show this help, or a command's.\n")
	b.WriteString("\nConnection and output flags (every command; give one of -url, -sentinel, -cluster):\n")
	b.WriteString(defaultsOf(connFlags))
	for _, c := range commands {
		if c.flags != nil {
			b.WriteString("\nFlags of " + c.name + ":\n")
			b.WriteString(defaultsOf(c.flags))
		}
	}
	b.WriteString(`
Exit status: 0 on success; 1 when the command failed (Redis unreachable,
no such lock, a force-unlock not confirmed); 2 on bad usage. The reason
is one line on standard error.
`)
	return b.String()
}

// defaultsOf renders the flags that register defines.
func defaultsOf(register func(*flag.FlagSet, *options)) string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	register(fs, defaults())
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}
