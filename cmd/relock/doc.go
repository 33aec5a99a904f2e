// Command relock is the operators' tool for locks in Redis: it shows who
// holds a lock, who waits for it and its TTL, lists locks, watches one
// change, and releases one whoever holds it. It reads and releases the
// records of relock's lock types and of Redisson's, which share their
// layout.
//
// Usage:
//
//	relock [flags] COMMAND [flags] [ARGS]
//
// The commands:
//
//	inspect NAME       who holds lock NAME and how often, its TTL, a
//	                   read/write lock's mode and readers, a fair lock's
//	                   queue, relock's registered waiters, a fencing counter
//	list [PATTERN]     the lock records whose names match PATTERN (a SCAN
//	                   glob, default *), on every master of a cluster
//	watch NAME         NAME's state, drawn again whenever it changes, until
//	                   interrupted (or -count draws, or -for a duration)
//	force-unlock NAME  delete lock NAME whoever holds it and wake its
//	                   waiters, after asking (unless -yes)
//	help [COMMAND]     the full help, or a command's
//
// Redis is reached with -url redis://[user:password@]host:port[/db]
// (rediss:// for TLS; the default is redis://localhost:6379), with
// -sentinel host:port,... -master NAME, or with -cluster host:port,...;
// "relock -h" lists every flag. -json prints JSON instead of tables.
//
// relock reads a lock in one read-only script (package inspect) and
// finds locks with SCAN, never KEYS. force-unlock runs the lock type's
// own ForceUnlock through a relock.Client, so that waiters are woken and
// relock holders told at once (their lock contexts cancelled), as
// deleting the key by hand would not do.
//
// The exit status is 0 on success, 1 when the command failed (Redis
// unreachable, no such lock, a force-unlock not confirmed) and 2 on bad
// usage; the reason is one line on standard error.
package main
