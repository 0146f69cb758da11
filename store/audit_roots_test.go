package store_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// TestAuditVerify_publishedRootsCatchARewrittenCheckpoint: an attacker who
// can write the database deletes an operation's last event, rewinds the
// operation, and rewrites the checkpoint that committed to it — event row,
// Merkle root, system-stream chain and checkpoint row — so that the
// database verifies on its own. The root published outside the database at
// checkpoint time does not match, and verification against it fails there.
func TestAuditVerify_publishedRootsCatchARewrittenCheckpoint(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	x.lifecycle("evt_1:task")
	op := x.lifecycle("evt_2:task")
	file := filepath.Join(t.TempDir(), "roots.jsonl")
	publisher := &audit.RootFile{Path: file}
	for {
		cp, wrote, err := x.trail.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !wrote {
			break
		}
		if err := publisher.Publish(ctx, cp); err != nil {
			t.Fatal(err)
		}
	}
	roots := readRoots(t, file)
	if len(roots) != 1 {
		t.Fatalf("published roots: %v", roots)
	}
	if rep := x.verifyWith(roots); !rep.OK() {
		t.Fatalf("the untouched trail against its published roots: %+v", rep.Breaks)
	}

	// The rewrite.
	store.AllowTampering(t, x.s)
	evs := x.events(op)
	store.ExecRaw(t, x.s, "DELETE FROM audit_events WHERE id = ?", evs[3].ID)
	store.ExecRaw(t, x.s, "UPDATE operations SET version = 3, audit_head = ? WHERE id = ?", evs[2].Hash, op)
	system := x.events(domain.SystemStream)
	old := system[len(system)-1]
	c, err := audit.ParseCheckpoint(old)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range c.Heads {
		if h.Stream == op {
			c.Heads[i] = domain.StreamHead{Stream: op, Seq: 3, Hash: evs[2].Hash}
		}
	}
	c.Root = audit.MerkleRoot(c.Heads)
	forged := audit.CheckpointEvent(ctx, x.l.IDs, old.At, c)
	forged.ID, forged.Seq, forged.PrevHash, forged.At = old.ID, old.Seq, old.PrevHash, old.At
	forged.Hash = domain.HashEvent(forged)
	store.ExecRaw(t, x.s, "DELETE FROM audit_events WHERE id = ?", old.ID)
	x.insert(forged)
	store.ExecRaw(t, x.s, "UPDATE audit_checkpoints SET root = ? WHERE seq = ?", c.Root, c.Seq)

	if rep := x.verify(); !rep.OK() {
		t.Fatalf("the rewrite should verify against the database alone (else this test proves nothing): %+v", rep.Breaks)
	}
	rep := x.verifyWith(roots)
	if rep.OK() || rep.Breaks[0].Kind != audit.BreakCheckpoint || !strings.Contains(rep.Breaks[0].Detail, "published outside the database") {
		t.Fatalf("against the published roots the rewrite should break at the checkpoint: %+v", rep.Breaks)
	}

	// A published checkpoint that was deleted outright is caught too.
	store.ExecRaw(t, x.s, "DELETE FROM audit_events WHERE id = ?", old.ID)
	rep = x.verifyWith(roots)
	if rep.OK() || !strings.Contains(rep.Breaks[len(rep.Breaks)-1].Detail, "was published with root") {
		t.Fatalf("a deleted published checkpoint: %+v", rep.Breaks)
	}
}

func TestReadRoots_refusesTwoRootsForOneCheckpoint(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	_, err := audit.ReadRoots(strings.NewReader(`{"checkpoint":1,"root":"` + a + `"}` + "\n" + `{"checkpoint":1,"root":"` + b + `"}` + "\n"))
	if err == nil || !strings.Contains(err.Error(), "published twice with different roots") {
		t.Fatalf("got %v", err)
	}
	if roots, err := audit.ReadRoots(strings.NewReader(`{"checkpoint":1,"root":"` + a + `"}` + "\n" + `{"checkpoint":1,"root":"` + a + `"}` + "\n")); err != nil || len(roots) != 1 {
		t.Fatalf("the same root published twice: %v %v", roots, err)
	}
	if _, err := audit.ReadRoots(strings.NewReader("not json\n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a bad line: %v", err)
	}
}

func readRoots(t *testing.T, file string) map[int64]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	roots, err := audit.ReadRoots(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return roots
}

func (x *auditFixture) verifyWith(roots map[int64]string) audit.Report {
	x.t.Helper()
	rep, err := x.trail.VerifyDB(context.Background(), &audit.Verifier{Roots: roots})
	if err != nil {
		x.t.Fatal(err)
	}
	return rep
}
