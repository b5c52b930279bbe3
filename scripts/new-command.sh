#!/usr/bin/env bash
# new-command.sh NAME DIR — scaffolds a respike command module in DIR:
#
#   DIR/main.go        the module (package main, sdk.Module)
#   DIR/NAME.go        a working command NAME, written to be edited
#   DIR/NAME_test.go   its test, run natively with sdktest
#
# NAME is the command's name: lower-case letters, digits, dots, dashes and
# underscores, starting with a letter, at most 64 bytes. DIR must not exist.
# Inside the respike repository (or any Go module that requires it) the new
# package builds as it is; elsewhere the script writes a go.mod that points
# at this checkout of respike.
#
# The generated code is gofmt-clean, passes go vet and its own test, and
# builds to wasm:
#
#   go test ./DIR
#   GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o commands/NAME.wasm ./DIR
set -euo pipefail

die() {
	echo "new-command: $*" >&2
	exit 1
}

if [ $# -ne 2 ]; then
	echo "usage: $0 NAME DIR   (e.g. $0 mycmd examples/mycmd)" >&2
	exit 2
fi
name=$1
dir=${2%/}

[[ $name =~ ^[a-z][a-z0-9._-]*$ ]] ||
	die "invalid NAME '$name': use lower-case letters, digits, '.', '-' and '_', starting with a letter"
[ ${#name} -le 64 ] || die "NAME is longer than 64 bytes"
[ -n "$dir" ] || die "DIR is empty"
if [ -e "$dir" ] || [ -L "$dir" ]; then
	die "$dir already exists; refusing to overwrite it"
fi

# The Go identifier part: NAME's words in CamelCase ("rate-limit.v2" →
# RateLimitV2), used after a prefix (runRateLimitV2, TestRateLimitV2), so a
# leading digit is fine.
ident=
IFS='._-' read -r -a words <<<"$name"
for w in "${words[@]}"; do
	[ -n "$w" ] || continue
	ident+=$(printf '%s' "${w:0:1}" | tr '[:lower:]' '[:upper:]')${w:1}
done

# The file name: NAME, unless its last "_word" would make Go treat the file
# as a test (_test) or restrict it to one OS or architecture (_linux, _wasm).
stem=$name
if [[ $name == *_* ]]; then
	case ${name##*_} in
	test | aix | android | darwin | dragonfly | freebsd | hurd | illumos | ios | js | linux | nacl | netbsd | openbsd | \
		plan9 | solaris | wasip1 | windows | zos | 386 | amd64 | amd64p32 | arm | armbe | arm64 | arm64be | loong64 | \
		mips | mipsle | mips64 | mips64le | mips64p32 | mips64p32le | ppc | ppc64 | ppc64le | riscv | riscv64 | s390 | \
		s390x | sparc | sparc64 | wasm)
		stem=${name}_cmd
		;;
	esac
fi

repo=$(cd "$(dirname "$0")/.." && pwd)

mkdir -p "$(dirname "$dir")"
mkdir "$dir" || die "cannot create $dir"
abs=$(cd "$dir" && pwd)

# render FILE: the template on stdin with NAME and IDENT filled in.
render() {
	sed -e "s/__NAME__/$name/g" -e "s/__IDENT__/$ident/g" >"$abs/$1"
}

render main.go <<'EOF'
// Command __NAME__ is a respike command module: its init functions register
// commands with the SDK, and the respike host runs them. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o __NAME__.wasm .
//
// and copy __NAME__.wasm into the commands/ folder of a running respike. The
// tutorial is examples/README.md in the respike repository.
package main

import sdk "github.com/respike/respike/guest-sdk"

// main is never called: the host calls the module's exported functions.
func main() {}

func init() { sdk.Module("__NAME__", "0.1.0") }
EOF

render "$stem.go" <<'EOF'
package main

import (
	"strconv"

	sdk "github.com/respike/respike/guest-sdk"
	"github.com/respike/respike/guest-sdk/codec"
)

func init() {
	sdk.Register(sdk.Command{
		Name: "__NAME__", Arity: -2, Flags: []string{"write", "denyoom"},
		FirstKey: 1, LastKey: 1, Step: 1, Group: "module", Since: "0.1.0",
		Summary: "Returns the value of a key, after replacing it with a new value when one is given.",
		Run:     run__IDENT__,
	})
}

// typeTag is what TYPE reports for keys this command writes. Every call
// carries it as a guard, so a key of another type answers WRONGTYPE.
const typeTag = "__NAME__"

// tag is the type-tag value, built once: codec.Str allocates.
var tag = codec.Str(typeTag)

// run__IDENT__ is the first step: __NAME__ key [value]. It checks the
// arguments, describes one atomic operation on the key's record, and hands
// it to the host with the step that continues.
func run__IDENT__(c *sdk.Ctx) {
	if c.NArg() > 3 {
		c.Error("ERR wrong number of arguments for '__NAME__' command")
		return
	}
	call := c.Record(c.Arg(1)).Guard(typeTag).Get(codec.BinValue)
	if c.NArg() == 3 {
		// Read the old value, then write the new one: in one call, so
		// no other client can slip in between.
		call.Put(codec.BinType, tag).Put(codec.BinValue, codec.Bytes(c.Arg(2)))
	}
	c.Exec(reply__IDENT__)
}

// reply__IDENT__ runs with the call's result: op 0 read the value.
func reply__IDENT__(c *sdk.Ctx) {
	r := c.Result(0)
	switch r.Code {
	case codec.OK:
		if v := r.Value(0); v.Kind == codec.KindBytes {
			c.Reply().Bulk(v.Bytes)
			return
		}
		c.Reply().Null() // the call created the record
	case codec.NotFound:
		c.Reply().Null() // a read of a missing key
	case codec.FilteredOut:
		c.Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.Error("ERR respike: store error (code " + strconv.Itoa(int(r.Code)) + "): " + r.Msg)
	}
}
EOF

render "${stem}_test.go" <<'EOF'
package main

import (
	"fmt"
	"testing"

	"github.com/respike/respike/guest-sdk/sdktest"
)

func Test__IDENT__(t *testing.T) {
	// Inline false: the host resumes the module after each store request,
	// as with Aerospike; true: it answers during the call, as with the
	// embedded store. A command must work both ways.
	for _, inline := range []bool{false, true} {
		t.Run(fmt.Sprintf("inline=%v", inline), func(t *testing.T) {
			h := sdktest.New()
			defer h.Store.Close()
			h.Inline = inline
			for _, step := range []struct {
				args []string
				want string // the reply as redis-cli shows it
			}{
				{[]string{"__NAME__", "k"}, "(nil)"},
				{[]string{"__NAME__", "k", "v1"}, "(nil)"},
				{[]string{"__NAME__", "k", "v2"}, `"v1"`},
				{[]string{"__NAME__", "k"}, `"v2"`},
				{[]string{"__NAME__", "k", "v", "extra"}, "(error) ERR wrong number of arguments for '__NAME__' command"},
			} {
				if got := h.Do(step.args...); got != step.want {
					t.Errorf("%q: got %s, want %s", step.args, got, step.want)
				}
			}
		})
	}
}
EOF

# Outside any Go module, make DIR a module of its own that uses this
# checkout of respike.
modfile=
d=$abs
while [ "$d" != / ]; do
	d=$(dirname "$d")
	if [ -f "$d/go.mod" ]; then
		modfile=$d/go.mod
		break
	fi
done
standalone=
if [ -z "$modfile" ]; then
	standalone=1
	gover=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$repo/go.mod")
	cat >"$abs/go.mod" <<EOF
module $name

go $gover

require github.com/respike/respike v0.0.0

replace github.com/respike/respike => $repo
EOF
	(cd "$abs" && go mod tidy) || die "go mod tidy failed in $dir"
elif ! grep -q 'github.com/respike/respike' "$modfile"; then
	echo "new-command: warning: $modfile does not require github.com/respike/respike; add it (go get github.com/respike/respike)" >&2
fi

# The templates are gofmt-clean; this keeps them so whatever NAME is.
gofmt=$(command -v gofmt || true)
[ -n "$gofmt" ] || gofmt="$(go env GOROOT 2>/dev/null || true)/bin/gofmt"
[ -x "$gofmt" ] && "$gofmt" -w "$abs"/*.go

echo "created $dir: main.go $stem.go ${stem}_test.go${standalone:+ go.mod}"
echo "next:"
if [ -n "$standalone" ]; then
	echo "  cd $dir && go test . && GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o $name.wasm ."
	echo "  cp $dir/$name.wasm <respike>/commands/    # a running respike loads it"
else
	case $dir in /*) pkg=$dir ;; *) pkg=./$dir ;; esac
	echo "  go test $pkg"
	echo "  GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o commands/$name.wasm $pkg"
fi
echo "  redis-cli $name greeting hello && redis-cli $name greeting"
