-- semaphore_ack: acknowledge grants, the permits the walks handed to a
-- client's waiters, when no acquire or release of the client carried them
-- soon enough (see semaphore_prelude.lua, "The grants").
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command (unused: the count only goes down)
-- ARGV[2]  the grants acknowledged, members separated by ","
--
-- Reply: 1.
grants = KEYS[6]
attempts = KEYS[7]
acknowledge(ARGV[2])
return 1
