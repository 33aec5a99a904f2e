// Command relock is the operators' tool for relock's and Redisson's
// records in Redis: it shows who holds a lock, a permit or an election's
// leadership, who waits, and the TTLs; lists every record with its kind;
// watches one change; releases one whoever holds it; and diagnoses the
// whole server (doctor). It reads the records of relock's lock types
// and synchronizers and of Redisson's, which share their layout.
//
// Usage:
//
//	relock [flags] COMMAND [flags] [ARGS]
//
// The commands:
//
//	inspect NAME [VALUE...]
//	                   what is under NAME: a lock's holders, TTL, mode,
//	                   fair queue, waiters and fencing counter; a group
//	                   lock's holders and their values (named by the
//	                   VALUEs given); a count's use, value and waiters
//	                   (a semaphore's, an expirable semaphore's, a
//	                   latch's); permits with their leases; an election's
//	                   leader, term, candidates and history; a fence
//	                   guard's last token
//	list [PATTERN]     the records whose names match PATTERN (a SCAN
//	                   glob, default *) with their kinds, which do not
//	                   change with their state (a count's use, while its
//	                   state shows one, beside it), on every master of a
//	                   cluster; -kind filters, -skip-idle leaves out the
//	                   counts of no use it can tell
//	watch NAME         NAME's state, drawn again whenever it changes, until
//	                   interrupted (or -count draws, or -for a duration)
//	force-unlock NAME [PERMIT-ID | VALUE...]
//	                   release a lock, an election's leadership, a group
//	                   lock's VALUEs or one permit, whoever holds it,
//	                   waking the waiters and telling the holder's relock
//	                   client, after asking (unless -yes)
//	doctor             old holds and waits, leases not renewed, stale
//	                   fair-queue entries, gone waiters, expired permits
//	                   and deadlocks, on every master; -json for scripts
//	help [COMMAND]     the full help, or a command's
//
// Redis is reached with -url host:port or redis://[user:password@]host:port[/db]
// (rediss:// for TLS; without -url, $REDIS_URL, else localhost:6379), with
// -sentinel host:port,... -master NAME, or with -cluster host:port,...;
// TLS in every mode with -tls, -cacert, -cert, -key and -insecure. Every
// connection is named relock-cli (CLIENT SETNAME). "relock -h" lists
// every flag; docs/cli.md and docs/doctor.md show each command's output.
//
// relock reads a name in read-only scripts (package inspect) and finds
// records with SCAN, never KEYS. force-unlock runs the lock type's own
// ForceUnlock (grouplock's over the VALUEs given, package permits'
// TryRelease for a permit) through a relock.Client, so that waiters are
// woken and relock holders told at once (their contexts cancelled), as
// deleting the key by hand would not do.
//
// The exit status:
//
//	0  found, done, or (doctor) nothing wrong
//	1  the command failed (Redis unreachable, refusing the login or a
//	   command, a force-unlock not confirmed or raced)
//	2  bad usage (an unknown command or flag, a bad name, address or file)
//	3  not found: nothing under NAME (inspect, force-unlock), or NAME
//	   never appeared while watched (watch; with -count N, after N reads)
//	4  doctor found problems
//
// The reason, and what to try, is one line on standard error.
package main
