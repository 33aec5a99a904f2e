// Package reorder is a TCP proxy on loopback, between go-redis clients
// and a redis-server, that makes the server run commands in orders that
// happen in production and that a direct connection on loopback never
// shows: a command sent on one connection runs after commands sent later
// on other connections, and a reply is lost after the server ran the
// command.
//
// The proxy reads each complete command (RESP arrays of bulk strings, or
// inline commands) from a client connection and asks a Rule what to do
// with it: forward it at once, hold it for a while (Action.Hold), or
// forward it and drop the server's reply (Action.DropReply). Commands of
// one connection reach the server in the order the client sent them,
// over one server connection per client connection, so a hold delays
// every later command of its connection as well.
//
// What it models. When go-redis hits a context deadline while it reads a
// reply, it closes the connection; the bytes it wrote are still delivered
// by the kernel and the server runs the command, maybe after commands
// that other connections sent later. The proxy does the same: when a
// client connection closes, the commands it holds are still forwarded on
// schedule, their replies are read and discarded, and only then is the
// server connection closed. A dropped reply is the other half: the
// command ran, the client connection is closed instead of answered, and
// its caller never hears of the result.
//
// What it does not model. It reorders across connections only; Redis
// answers each connection in order, and the proxy matches replies to
// commands in that order (pushes, RESP3's out-of-band replies, match no
// command). Under RESP3 the confirmation of SUBSCRIBE and its kin is a
// push: the proxy takes the first such push as that command's reply, so
// that pub/sub connections pass through and Quiet does not wait for them
// forever, but DropReply on a pub/sub connection, RESP2 subscriptions to
// several channels in one command, CLIENT REPLY OFF and MONITOR are not
// supported. RESP3 streamed strings and aggregates (length "?"), which
// Redis does not send, are a protocol error that closes the connection.
//
// Every address is a loopback one: the proxy listens on 127.0.0.1 and
// forwards only to a loopback target.
package reorder
