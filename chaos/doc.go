// Package chaos checks Handoff's histories the way Jepsen does. Its test
// starts two or three replicas of the real binary on one PostgreSQL
// database, runs concurrent workflow clients against them (client.Do and
// the raw calls) while a nemesis kills servers with SIGKILL, terminates
// their database connections and lets workers sleep past their leases, and
// records every call and answer with its invoke and complete times.
//
// Afterwards the history is checked: per key, for linearizability against
// a model of the operation's lifecycle (register, claim, begin, heartbeat,
// settle, read) with github.com/anishathalye/porcupine, where a call whose
// answer was lost may or may not have taken effect; and directly, against
// the database and a sandbox provider that counts executions: at most one
// execution per provider key unless the ledger recorded why a re-send was
// safe, every acknowledged settle still visible, fencing tokens strictly
// increasing, the audit chain verified, and nothing left in processing or
// action_pending once leases have lapsed.
//
// The package has no code outside its tests; this file carries its
// documentation. The test needs PostgreSQL (HANDOFF_TEST_POSTGRES) and
// runs for about a minute; -chaos.duration runs the load longer, and a
// failing run saves its history (JSONL and porcupine's HTML view) under
// -chaos.out, printing the path.
package chaos
