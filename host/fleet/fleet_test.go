package fleet

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/respike/respike/guest-sdk/codec"
	"github.com/respike/respike/host/store/memory"
)

// A published module reads back byte for byte across chunks; a chunk that
// changed or went missing fails the fetch instead of loading something
// else, and a new version's publish deletes the old one's chunks.
func TestPublishFetch(t *testing.T) {
	ctx := context.Background()
	st := memory.New(memory.Options{})
	defer st.Close()
	bin := bytes.Repeat([]byte("0123456789"), 5) // 50 bytes: 13 chunks of 4
	e, err := Publish(ctx, st, "mod", bin, 4, "1.0.0", "test")
	if err != nil {
		t.Fatal(err)
	}
	if e.Chunks != 13 || e.Size != 50 || e.Version != "1.0.0" || e.DeployedBy != "test" {
		t.Fatalf("entry %+v", e)
	}
	f, err := New(st, nil, Config{Proxy: "p", Staging: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := f.Deployed(ctx)
	if err != nil || len(entries) != 1 || entries[0] != e {
		t.Fatalf("Deployed = %+v, %v; want [%+v]", entries, err, e)
	}
	got, err := f.fetch(ctx, e)
	if err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("fetch = %q, %v", got, err)
	}

	put := func(i int, data []byte) {
		c := codec.Call{Key: []byte(e.ChunkKey(i))}
		c.Put(BinData, codec.Bytes(data))
		if _, err := f.exec(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	put(3, []byte("XXXX"))
	if _, err := f.fetch(ctx, e); err == nil || !strings.Contains(err.Error(), "hash") {
		t.Errorf("fetch of a changed chunk: %v, want a hash mismatch", err)
	}
	put(3, []byte("2345"))
	del := codec.Call{Key: []byte(e.ChunkKey(12))}
	del.Delete()
	if _, err := f.exec(ctx, del); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fetch(ctx, e); err == nil {
		t.Errorf("fetch with a chunk missing succeeded")
	}

	// A second version replaces the index entry and deletes the first's
	// chunks.
	e2, err := Publish(ctx, st, "mod", []byte("version two"), 4, "2.0.0", "test")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.fetch(ctx, e2); err != nil || string(got) != "version two" {
		t.Fatalf("fetch of version two = %q, %v", got, err)
	}
	probe := codec.Call{Key: []byte(e.ChunkKey(0))}
	probe.Get(BinData)
	if _, err := f.exec(ctx, probe); err != errNotFound {
		t.Errorf("the first version's chunk 0 after the second's publish: %v, want not found", err)
	}
	// None of it is visible in database 0.
	var resp codec.Response
	st.Exec(ctx, 0, &codec.Request{Kind: codec.ReqCount}, &resp)
	if resp.Count != 0 {
		t.Errorf("database 0 holds %d records", resp.Count)
	}
}
