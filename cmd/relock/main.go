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

// The exit statuses.
const (
	exitOK       = 0 // found, done, or (doctor) nothing wrong
	exitError    = 1 // the command failed
	exitUsage    = 2 // bad usage, an invalid name included
	exitNotFound = 3 // nothing under the name (or it never appeared while watched)
	exitFindings = 4 // doctor found something wrong
)

// A usageError is a mistake in the command line: exit status 2.
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// A notFoundError is a name with nothing under it: exit status 3.
type notFoundError struct{ name string }

func (e notFoundError) Error() string {
	return fmt.Sprintf("nothing named %q in Redis (see relock list for the names there)", e.name)
}

// errFindings ends a doctor run that found something: exit status 4,
// with the findings on standard output.
var errFindings = errors.New("doctor found problems (listed above)")

// run runs the command line args and returns the exit status (exitOK,
// ...). Errors go to stderr on one line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, &env{in: stdin, out: stdout, errs: stderr, opts: defaults()})
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "relock: "+strings.Join(strings.Fields(err.Error()), " "))
	switch {
	case errors.As(err, new(usageError)) || errors.Is(err, relock.ErrInvalidName) || errors.Is(err, relock.ErrInvalidArgument):
		return exitUsage
	case errors.As(err, new(notFoundError)):
		return exitNotFound
	case errors.Is(err, errFindings):
		return exitFindings
	}
	return exitError
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
	min, max int                                // how many arguments it takes; max -1: any number
	flags    func(fs *flag.FlagSet, o *options) // its own flags, if any
	run      func(ctx context.Context, e *env, args []string) error
}

var commands = []*command{
	{name: "inspect", args: "NAME [VALUE...]", min: 1, max: -1, flags: codecFlag, run: inspectCmd, summary: `Show what is kept under NAME: a lock's holders and hold counts, TTL,
read/write mode and readers with their leases, fair queue with
deadlines, relock's registered waiters and fencing counter; a group
lock's holders and the values they hold (named by the VALUEs given,
which Redis keeps only as hashes); a count's use, value and waiters
(a semaphore's, an expirable semaphore's or a latch's); expirable
permits, each with its lease; an election's leader, term, candidates
and history; a fence guard's last token.`},
	{name: "list", args: "[PATTERN]", max: 1, flags: listFlags, run: listCmd, summary: `List the records whose names match PATTERN (a SCAN glob, default *),
with their kinds, found with SCAN on every master of a cluster. A
record's kind does not change with its state; a count's use, while its
state shows one, follows it: count (semaphore's), (latch's).`},
	{name: "watch", args: "NAME", min: 1, max: 1, flags: watchFlags, run: watchCmd, summary: `Show NAME, and again whenever it changes (on its channels' messages,
and every -interval), until interrupted, -count drawings or -for.`},
	{name: "force-unlock", args: "NAME [PERMIT-ID | VALUE...]", min: 1, max: -1, flags: forceFlags, run: forceCmd, summary: `Release NAME whoever holds it: a lock (through its type's own
ForceUnlock, which wakes its waiters), an election's leadership, with
VALUEs those values of a group lock, or with PERMIT-ID one permit of an
expirable semaphore; the holders' relock clients are told at once.
Asks for confirmation unless -yes.`},
	{name: "doctor", args: "", flags: doctorFlags, run: doctorCmd, summary: `Scan every record (every master of a cluster) for what is wrong: holds
and waits older than -old, leases not renewed, stale fair-queue
entries, waiters whose client is gone, expired permits, waits-for
cycles between owners (deadlocks), and masters that may evict lock keys
(a maxmemory with a maxmemory-policy other than noeviction). Exit status
4 when it finds any.`},
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
	if len(pos) < cmd.min || cmd.max >= 0 && len(pos) > cmd.max {
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
	b.WriteString(exitText)
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
	b.WriteString("\nConnection and output flags (every command; at most one of -url, -sentinel and\n-cluster; with none, $REDIS_URL, else " + defaultURL + "):\n")
	b.WriteString(defaultsOf(connFlags))
	for _, c := range commands {
		if c.flags != nil {
			b.WriteString("\nFlags of " + c.name + ":\n")
			b.WriteString(defaultsOf(c.flags))
		}
	}
	b.WriteString(exitText)
	return b.String()
}

// exitText documents the exit statuses, in the full help.
const exitText = `
Exit status:
  0  found, done, or (doctor) nothing wrong
  1  the command failed: Redis unreachable or refusing, a force-unlock not
     confirmed or raced; the reason and what to try are on standard error
  2  bad usage: an unknown command or flag, a bad name, address or file
  3  not found: nothing under NAME (inspect, force-unlock), or NAME never
     appeared while watched (watch)
  4  doctor found problems (listed on standard output)
`

// defaultsOf renders the flags that register defines.
func defaultsOf(register func(*flag.FlagSet, *options)) string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	register(fs, defaults())
	var b bytes.Buffer
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}
