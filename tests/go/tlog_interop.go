// Command tlog_interop checks a qahwa log, as served, with Go's golang.org/x/mod
// sumdb/note and sumdb/tlog: an independent implementation of signed notes, RFC 6962
// trees and tiles. Run by tests/log/test_tlog_go.py in GOPATH mode (no module proxy).
//
// Usage: tlog_interop DIR VKEY OLD_CHECKPOINT NEW_CHECKPOINT
//
// DIR holds the tiles and entry bundles at their C2SP paths (tile/<L>/<N>[.p/<W>],
// tile/entries/<N>[.p/<W>]). It prints one line per check and exits 1 on the first failure.
package main

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io/ioutil"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

const height = 8

func fail(format string, args ...interface{}) {
	fmt.Printf("FAIL "+format+"\n", args...)
	os.Exit(1)
}

// indexPath writes n in 3-digit groups, all but the last prefixed with x.
func indexPath(n int64) string {
	s := strconv.FormatInt(n, 10)
	for len(s)%3 != 0 {
		s = "0" + s
	}
	var parts []string
	for i := 0; i < len(s); i += 3 {
		p := s[i : i+3]
		if i+3 < len(s) {
			p = "x" + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "/")
}

// c2spPath is the C2SP tile path of a Go tile (L == -1: the entry bundle).
func c2spPath(t tlog.Tile) string {
	p := "tile/"
	if t.L < 0 {
		p += "entries/"
	} else {
		p += strconv.Itoa(t.L) + "/"
	}
	p += indexPath(t.N)
	if t.W != 1<<height {
		p += ".p/" + strconv.Itoa(t.W)
	}
	return p
}

type dirTiles struct{ dir string }

func (d dirTiles) Height() int { return height }

func (d dirTiles) ReadTiles(tiles []tlog.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, t := range tiles {
		data, err := ioutil.ReadFile(filepath.Join(d.dir, c2spPath(t)))
		if err != nil {
			return nil, err
		}
		out[i] = data
	}
	return out, nil
}

func (d dirTiles) SaveTiles([]tlog.Tile, [][]byte) {}

type checkpoint struct {
	origin string
	tree   tlog.Tree
}

func openCheckpoint(path string, v note.Verifier) checkpoint {
	msg, err := ioutil.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		fail("the checkpoint %s does not verify with the vkey: %v", path, err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 {
		fail("the checkpoint %s is short", path)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("the checkpoint's size: %v", err)
	}
	raw, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(raw) != tlog.HashSize {
		fail("the checkpoint's root hash is not a base64 hash")
	}
	var h tlog.Hash
	copy(h[:], raw)
	fmt.Printf("ok checkpoint %s verifies: origin %s size %d\n", filepath.Base(path), lines[0], size)
	return checkpoint{lines[0], tlog.Tree{N: size, Hash: h}}
}

func main() {
	if len(os.Args) != 5 {
		fail("usage: tlog_interop DIR VKEY OLD NEW")
	}
	dir, vkey := os.Args[1], os.Args[2]
	v, err := note.NewVerifier(vkey)
	if err != nil {
		fail("the vkey: %v", err)
	}
	old := openCheckpoint(os.Args[3], v)
	cur := openCheckpoint(os.Args[4], v)
	if old.origin != v.Name() || cur.origin != v.Name() {
		fail("the origin is not the key's name")
	}
	tr := dirTiles{dir}
	hr := tlog.TileHashReader(cur.tree, tr)

	// The root recomputes from the tiles (TileHashReader authenticates every tile it reads).
	root, err := tlog.TreeHash(cur.tree.N, hr)
	if err != nil {
		fail("the root from the tiles: %v", err)
	}
	if root != cur.tree.Hash {
		fail("the root from the tiles %v is not the checkpoint's %v", root, cur.tree.Hash)
	}
	fmt.Printf("ok the root of size %d recomputes from the tiles\n", cur.tree.N)

	// Every entry hashes to its hash in the level-0 tile, and is proven in the tree.
	var bundle, data []byte
	var bundleN int64 = -1
	var wide tlog.Tile
	for n := int64(0); n < cur.tree.N; n++ {
		t := tlog.TileForIndex(height, tlog.StoredHashIndex(0, n))
		if t.N != bundleN || bundle == nil {
			full := tlog.Tile{H: height, L: -1, N: t.N, W: t.W}
			if (t.N+1)<<height <= cur.tree.N {
				full.W = 1 << height
			} else {
				full.W = int(cur.tree.N - t.N<<height)
			}
			bundle, err = ioutil.ReadFile(filepath.Join(dir, c2spPath(full)))
			if err != nil {
				fail("%v", err)
			}
			bundleN = t.N
			// The level-0 tile of these entries, authenticated against the checkpoint.
			wide = tlog.Tile{H: height, L: 0, N: t.N, W: full.W}
			data, err = tlog.ReadTileData(wide, hr)
			if err != nil {
				fail("tile data for entry %d: %v", n, err)
			}
		}
		if len(bundle) < 2 {
			fail("entry bundle %d ends early at entry %d", t.N, n)
		}
		size := int(binary.BigEndian.Uint16(bundle))
		if len(bundle) < 2+size {
			fail("entry bundle %d ends inside entry %d", t.N, n)
		}
		entry := bundle[2 : 2+size]
		bundle = bundle[2+size:]
		want, err := tlog.HashFromTile(wide, data, tlog.StoredHashIndex(0, n))
		if err != nil {
			fail("hash from tile for entry %d: %v", n, err)
		}
		if tlog.RecordHash(entry) != want {
			fail("entry %d does not hash to its tile hash", n)
		}
		if n%251 != 0 && n != cur.tree.N-1 {
			continue
		}
		p, err := tlog.ProveRecord(cur.tree.N, n, hr)
		if err != nil {
			fail("prove record %d: %v", n, err)
		}
		if err := tlog.CheckRecord(p, cur.tree.N, cur.tree.Hash, n, want); err != nil {
			fail("record %d: %v", n, err)
		}
	}
	fmt.Printf("ok all %d entries hash to their tile hashes (every 251st proven in the tree)\n", cur.tree.N)

	// The older checkpoint is consistent with the newer one.
	p, err := tlog.ProveTree(cur.tree.N, old.tree.N, hr)
	if err != nil {
		fail("prove tree: %v", err)
	}
	if err := tlog.CheckTree(p, cur.tree.N, cur.tree.Hash, old.tree.N, old.tree.Hash); err != nil {
		fail("the checkpoint of size %d is not consistent with that of size %d: %v",
			old.tree.N, cur.tree.N, err)
	}
	fmt.Printf("ok size %d is consistent with size %d\n", old.tree.N, cur.tree.N)
}
