// Package lua holds relock's Lua scripts, one operation a file: every
// operation of every lock type relock has, on Redisson's key layout.
//
// relock's lock packages run them, and package scripts makes public those
// a program can run on a Redisson lock without a relock Client. Each
// function returns its script wrapped in a *redis.Script, so calls (Run)
// go out as EVALSHA and fall back to EVAL when the server answers
// NOSCRIPT.
//
// Every script names its KEYS, ARGV and replies in the header of its .lua
// file. An owner field, ARGV of most lock scripts, is "<client
// id>:<owner>". relock tells its own clients from Redisson's by the client
// id: relock's are version-8 UUIDs, Redisson's version 4. A program that
// runs the scripts through package scripts uses a version-4 UUID, as
// Redisson does, so that relock clients treat its holds as a Redisson
// client's, and passes "0" as Acquire's ARGV[3]: relock's registry of
// waiters is for waiters that listen on a relock client's channel. Such a
// waiter listens on the lock's channel, where a release publishes.
//
// Scripts share preludes of helpers, prepended in Go: Lua scripts cannot
// include one another. A script carries only the helpers it uses, since
// Redis makes every helper a script defines anew on each call. Scripts
// touch only keys passed in KEYS, and every key a script touches shares
// the lock key's hash slot, so they run unchanged on Redis Cluster.
// Channels are passed in KEYS too; the publish command (PUBLISH or
// SPUBLISH) is an ARGV value. Key and channel names follow Redisson's
// layout so that relock and Redisson clients can share a lock.
//
// An acquire that takes the lock replies 1 rather than nil, where its
// other replies leave 1 free to mean that: go-redis turns a nil reply
// into the error redis.Nil, and deciding whether that error is worth a
// retry costs it some 24 allocations, more than the rest of the call.
// Replies are relock's own; Redisson never reads them.
package lua
