// cstrings: CGET, CSET and CINCR, a respike command module written in C
// against the ABI itself (docs/abi.md), without the Go SDK and without libc.
//
// It shows that the ABI is language-neutral, and what the guest costs when
// it is not Go-compiled: measured side by side on one daemon with
// scripts/bench-guest.sh (docs/performance.md). Semantics follow
// commands/strings: CGET is GET, CSET is SET without options, CINCR is
// INCR, except that CINCR does not parse an integer stored as bytes (a
// value built by APPEND or SETRANGE): it answers "not an integer" there,
// where INCR reads and parses the bytes. CGET answers an error for a float
// value (INCRBYFLOAT stores one).
//
// Build (Debian: apt-get install clang lld):
//
//	clang --target=wasm32 -O2 -mbulk-memory -nostdlib -Wl,--no-entry \
//	      -o cstrings.wasm examples/cstrings/cstrings.c
//
// Every message crosses in the layout Go gives guest-sdk/codec's types on a
// 64-bit architecture: 8-byte pointers and lengths, offsets as below. The
// module is single-threaded, as every wasm instance is: the host never
// enters it twice at once.

typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef long long i64;
typedef int i32;

#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(name) __attribute__((import_module("respike"), import_name(name)))

// Host functions (module "respike").
IMPORT("exec") i32 host_exec(u32 req, u32 zero, u32 out, u32 outCap);
IMPORT("take") i32 host_take(u32 out, u32 outCap);
IMPORT("reply") void host_reply(u32 ptr, u32 len);

static inline u32 rd32(const u8 *p) { return *(const u32 *)p; }
static inline u64 rd64(const u8 *p) { return *(const u64 *)p; }
static inline void wr32(u8 *p, u32 v) { *(u32 *)p = v; }
static inline void wr64(u8 *p, u64 v) { *(u64 *)p = v; }
static inline const u8 *ptr(u64 v) { return (const u8 *)(u32)v; }
// copy compiles to memory.copy (-mbulk-memory); clang may still call
// memcpy and memset for struct copies, so they exist too.
static inline void copy(void *d, const void *s, u32 n) { __builtin_memcpy(d, s, n); }
void *memcpy(void *d, const void *s, unsigned long n) { __builtin_memmove(d, s, n); return d; }
void *memset(void *d, int c, unsigned long n) {
	u8 *p = d;
	while (n--) *p++ = (u8)c;
	return d;
}

// Memory: a bump allocator over memory.grow. Buffers only grow (doubling),
// so what they leave behind is bounded by what they hold; a value larger
// than the instance's memory limit traps, and the host answers an error.
extern u8 __heap_base;
static u32 heapTop;

static u8 *alloc(u32 n) {
	if (!heapTop) heapTop = (u32)&__heap_base;
	u32 at = (heapTop + 7) & ~7u;
	u32 end = at + n;
	u32 have = __builtin_wasm_memory_size(0) << 16;
	if (end > have && __builtin_wasm_memory_grow(0, ((end - have) >> 16) + 1) == (unsigned long)-1)
		__builtin_trap(); // over the memory limit
	heapTop = end;
	return (u8 *)at;
}

typedef struct {
	u8 *p;
	u32 len, cap;
} buf;

static void reserve(buf *b, u32 n) {
	if (n > 1u << 30 || b->len + n > 1u << 30) __builtin_trap(); // over 1 GiB: stop before sizes wrap
	if (b->len + n <= b->cap) return;
	u32 c = b->cap ? b->cap : 256;
	while (c < b->len + n) c *= 2;
	u8 *p = alloc(c);
	copy(p, b->p, b->len);
	b->p = p;
	b->cap = c;
}
static void put(buf *b, const void *s, u32 n) {
	reserve(b, n);
	copy(b->p + b->len, s, n);
	b->len += n;
}

static buf in;    // host→guest messages (respike_buf)
static buf out;   // the reply being built
static buf res;   // exec's laid-out responses
static buf enc;   // the ops of the request being built
static buf man;   // the manifest
static u64 req[64 / 8];   // codec.Request
static u64 call[136 / 8]; // codec.Call

static const u8 *response(const u8 *p);

// Layout offsets (Go's, 64-bit).
enum {
	startProto = 0, startCmd = 4, startArgs = 24,         // codec.Start
	sliceSize = 24,                                       // a slice: {ptr, len, cap}
	reqSize = 64,                                         // codec.Request: Kind 0, Calls 8
	callSize = 136, callKey = 0, callExists = 24,         // codec.Call, with its Policy at 24
	callTTL = 25, callGuard = 48, callEnc = 104, callNenc = 128, callEncoded = 132,
	respCode = 0, respMsg = 8, respResults = 24,          // codec.Response
	resCode = 0, resMsg = 8, resValues = 40,              // codec.Result
	valSize = 72, valKind = 0, valInt = 8, valBytes = 24, // codec.Value
};
// codec constants.
enum { kindInt = 1, kindFloat = 2, kindBytes = 3, kindStr = 4 };
enum { opGet = 1, opPut = 2, opAdd = 3 };
enum { existsUpdate = 0, existsReplace = 2 };
enum { ttlKeep = 0, ttlNever = 1 };
enum {
	codeOK = 0, codeServer = 1, codeNotFound = 2, codeParameter = 4, codeTimeout = 9, codeBinType = 12,
	codeTooBig = 13, codeFiltered = 27, codeOverflow = 1000, codeBackend = 1001, codeUnavail = 1002,
	codeInvalid = 1003,
};
enum { statusDone = 1, statusPending = 2 };
enum { cmdGet = 1, cmdSet, cmdIncr }; // manifest order, plus one

static const char tagString[] = "string";
static const char wrongType[] = "WRONGTYPE Operation against a key holding the wrong kind of value";

// ---- manifest -------------------------------------------------------------

static u32 slen(const char *s) {
	u32 n = 0;
	while (s[n]) n++;
	return n;
}
static void mstr(const char *s) {
	u32 n = slen(s);
	put(&man, &n, 4);
	put(&man, s, n);
}
static void m64(i64 v) { put(&man, &v, 8); }

static void command(const char *name, i64 arity, const char *flag1, const char *flag2, const char *summary) {
	u32 nflags = 2;
	mstr(name);
	m64(arity);
	put(&man, &nflags, 4);
	mstr(flag1);
	mstr(flag2);
	m64(1), m64(1), m64(1); // first key, last key, step
	mstr("string");
	mstr(summary);
	mstr("1.0.0");
}

EXPORT("_initialize") void initialize(void) {
	u32 n = 3;
	mstr("cstrings");
	mstr("1.0.0");
	put(&man, &n, 4);
	command("cget", 2, "readonly", "fast", "GET, in C: the string value of a key.");
	command("cset", 3, "write", "denyoom", "SET without options, in C.");
	command("cincr", 2, "write", "fast", "INCR, in C.");
}

EXPORT("respike_abi") i32 abi(void) { return 4; }
EXPORT("respike_manifest") i64 manifest(void) { return (i64)(u32)man.p << 32 | man.len; }
EXPORT("respike_buf") u32 buffer(u32 n) {
	in.len = 0;
	reserve(&in, n);
	return (u32)in.p;
}

// ---- replies --------------------------------------------------------------

static void lit(const char *s) { put(&out, s, slen(s)); }
static void decimal(i64 v) {
	char tmp[20];
	int i = 20;
	u64 u = v < 0 ? -(u64)v : (u64)v;
	do tmp[--i] = '0' + u % 10; while (u /= 10);
	if (v < 0) tmp[--i] = '-';
	put(&out, tmp + i, 20 - i);
}
static void error(const char *msg) {
	lit("-");
	lit(msg);
	lit("\r\n");
}
static void bulk(const u8 *b, u32 n) {
	lit("$");
	decimal(n);
	lit("\r\n");
	put(&out, b, n);
	lit("\r\n");
}
static void bulkInt(i64 v) {
	char tmp[20];
	u32 at = out.len;
	decimal(v);
	u32 n = out.len - at;
	copy(tmp, out.p + at, n);
	out.len = at;
	bulk((const u8 *)tmp, n);
}
// resultError answers the call of result r, which the store refused, in
// the words of commands/internal/kit's StoreErrorText: both modules say the
// same.
static void resultError(const u8 *r) {
	i32 code = (i32)rd32(r + resCode);
	u32 mlen = (u32)rd64(r + resMsg + 8);
	const char *what;
	switch (code) {
	case codeTooBig: what = "the value is too large for the store's record size limit"; break;
	case codeTimeout: what = "store timeout; the command may or may not have been applied"; break;
	case codeUnavail: what = "store unavailable"; break;
	case codeBackend: case codeServer: what = "store error"; break;
	case codeParameter: what = "the store refused a parameter"; break;
	case codeInvalid: what = "the module sent an invalid request"; break;
	default: what = "unexpected store result";
	}
	lit("-ERR respike: ");
	lit(what);
	lit(" (code ");
	decimal(code);
	lit(")");
	if (mlen) {
		lit(": ");
		put(&out, ptr(rd64(r + resMsg)), mlen);
	}
	lit("\r\n");
}

// parseInt parses a canonical decimal int64, as Redis's string2ll.
static int parseInt(const u8 *b, u32 n, i64 *v) {
	if (n == 0 || n > 20) return 0;
	if (n == 1 && b[0] == '0') return *v = 0, 1;
	u32 i = b[0] == '-';
	if (i == n || b[i] < '1' || b[i] > '9') return 0;
	u64 u = 0;
	for (u32 j = i; j < n; j++) {
		u32 d = b[j] - '0';
		if (d > 9 || u > (~0ULL - d) / 10) return 0;
		u = u * 10 + d;
	}
	if (i) {
		if (u > 1ULL << 63) return 0;
		*v = (i64)(0 - u);
	} else {
		if (u > (1ULL << 63) - 1) return 0;
		*v = (i64)u;
	}
	return 1;
}

// ---- requests ---------------------------------------------------------------

// Ops are encoded as guest-sdk/codec/wire.go does: code, presence bits
// (opBin 2, opValue 4), the bin name, the value.
static u32 nops;
static void opHead(u8 code, u8 bits, u8 bin) {
	u8 h[7] = {code, bits, 1, 0, 0, 0, bin};
	put(&enc, h, 7);
	nops++;
}
static void opRead(u8 bin) { opHead(opGet, 2, bin); }
static void opInt(u8 code, u8 bin, i64 v) {
	u8 k = kindInt;
	opHead(code, 6, bin);
	put(&enc, &k, 1);
	put(&enc, &v, 8);
}
static void opBytes(u8 code, u8 bin, u8 kind, const void *b, u32 n) {
	opHead(code, 6, bin);
	put(&enc, &kind, 1);
	put(&enc, &n, 4);
	put(&enc, b, n);
}

// record begins the request's one call on key.
static void record(const u8 *key, u32 klen, u8 exists, u8 ttl, int guard) {
	u8 *c = (u8 *)call;
	memset(c, 0, callSize);
	wr64(c + callKey, (u32)key), wr64(c + callKey + 8, klen), wr64(c + callKey + 16, klen);
	c[callExists] = exists;
	c[callTTL] = ttl;
	if (guard) wr64(c + callGuard, (u32)tagString), wr64(c + callGuard + 8, 6);
	enc.len = 0;
	nops = 0;
}

// submit finishes the request and runs it inline; it returns the first
// result's address, or 0 when the store answers later (the caller waits)
// or the request failed as a whole (the reply then holds the error).
static const u8 *submit(int *wait) {
	u8 *c = (u8 *)call, *r = (u8 *)req;
	wr64(c + callEnc, (u32)enc.p), wr64(c + callEnc + 8, enc.len), wr64(c + callEnc + 16, enc.cap);
	wr32(c + callNenc, nops);
	c[callEncoded] = 1;
	memset(r, 0, reqSize);
	r[0] = 1; // ReqRecords
	wr64(r + 8, (u32)c), wr64(r + 16, 1), wr64(r + 24, 1);
	if (!res.cap) reserve(&res, 4096);
	i32 n = host_exec((u32)r, 0, (u32)res.p, res.cap);
	if (n < 0) {
		res.len = 0;
		reserve(&res, (u32)-n);
		n = host_take((u32)res.p, res.cap);
	}
	if (n == 0) {
		*wait = 1;
		return 0;
	}
	*wait = 0;
	return response(res.p);
}

// response returns the first result of the laid-out Response at p, or 0
// after writing the error of a request that failed as a whole (in the
// SDK's words: guest-sdk's backendError).
static const u8 *response(const u8 *p) {
	i32 code = (i32)rd32(p + respCode);
	if (code == codeOK) return ptr(rd64(p + respResults));
	if (code == codeUnavail)
		lit("-ERR backend unavailable: ");
	else if (code == codeTimeout)
		lit("-ERR backend timeout: ");
	else {
		lit("-ERR backend error (code ");
		decimal(code);
		lit("): ");
	}
	put(&out, ptr(rd64(p + respMsg)), (u32)rd64(p + respMsg + 8));
	lit("\r\n");
	return 0;
}

static const u8 *value(const u8 *result, int i) { return ptr(rd64(result + resValues)) + valSize * i; }

// ---- commands ---------------------------------------------------------------

// A command is a request, then a reply from its result: request* builds
// the request, done* writes the reply (at once, or on resume).

static void requestGet(const u8 *key, u32 klen) {
	record(key, klen, existsUpdate, ttlKeep, 1);
	opRead('v');
}

static void doneGet(int proto, const u8 *r) {
	i32 code = (i32)rd32(r + resCode);
	const u8 *v = value(r, 0);
	if (code == codeNotFound)
		lit(proto == 3 ? "_\r\n" : "$-1\r\n");
	else if (code == codeFiltered)
		error(wrongType);
	else if (code != codeOK)
		resultError(r);
	else if (v[valKind] == kindInt)
		bulkInt((i64)rd64(v + valInt));
	else if (v[valKind] == kindBytes)
		bulk(ptr(rd64(v + valBytes)), (u32)rd64(v + valBytes + 8));
	else
		error("ERR cstrings: value kind not supported (a float: use GET)");
}

// requestSet replaces the record: type tag and value, no expiry. A
// canonical integer is stored as an integer, as commands/strings does, so
// INCR works on it in one atomic add.
static void requestSet(const u8 *key, u32 klen, const u8 *val, u32 vlen) {
	i64 n;
	record(key, klen, existsReplace, ttlNever, 0);
	opBytes(opPut, 't', kindStr, tagString, 6);
	if (parseInt(val, vlen, &n)) opInt(opPut, 'v', n);
	else opBytes(opPut, 'v', kindBytes, val, vlen);
}

static void doneSet(const u8 *r) {
	i32 code = (i32)rd32(r + resCode);
	if (code == codeOK)
		lit("+OK\r\n");
	else
		resultError(r);
}

// requestIncr adds 1 to the integer value (a new record starts at 0 and
// gets its type tag), keeps the TTL and reads the sum back: one atomic call.
static void requestIncr(const u8 *key, u32 klen) {
	record(key, klen, existsUpdate, ttlKeep, 1);
	opInt(opAdd, 'v', 1);
	opBytes(opPut, 't', kindStr, tagString, 6);
	opRead('v');
}

static void doneIncr(const u8 *r) {
	i32 code = (i32)rd32(r + resCode);
	switch (code) {
	case codeOK:
		lit(":");
		decimal((i64)rd64(value(r, 2) + valInt));
		lit("\r\n");
		break;
	case codeBinType: error("ERR value is not an integer or out of range"); break;
	case codeOverflow: error("ERR increment or decrement would overflow"); break;
	case codeFiltered: error(wrongType); break;
	default: resultError(r);
	}
}

static void done(u32 cmd, int proto, const u8 *r) {
	switch (cmd) {
	case cmdGet: doneGet(proto, r); break;
	case cmdSet: doneSet(r); break;
	case cmdIncr: doneIncr(r); break;
	}
}

// ---- commands that wait -------------------------------------------------------

// A command whose request the store answers later keeps what done needs
// in a slot named by its handle; the host's next message overwrites the
// start message.
typedef struct {
	u32 cmd, proto, busy;
} slot;
static slot *slots;
static u32 nslots, capSlots;

static u32 park(u32 cmd, int proto) {
	u32 h = 0;
	while (h < nslots && slots[h].busy) h++;
	if (h == nslots) {
		if (nslots == capSlots) {
			u32 c = capSlots ? capSlots * 2 : 64;
			slot *s = (slot *)alloc(c * sizeof(slot));
			copy(s, slots, nslots * sizeof(slot));
			slots = s;
			capSlots = c;
		}
		nslots++;
	}
	slots[h] = (slot){cmd, (u32)proto, 1};
	return h;
}

// ---- entry points -------------------------------------------------------------

// run runs the command of the Start laid out at s. It returns 1 when the
// reply is in out, 0 when the command waits (out then holds the Pending
// answer).
static int run(const u8 *s) {
	int proto = s[startProto];
	u32 cmd = rd32(s + startCmd);
	const u8 *args = ptr(rd64(s + startArgs));
	u32 nargs = (u32)rd64(s + startArgs + 8);
	// The host checked the arity against the manifest.
	const u8 *key = nargs > 1 ? ptr(rd64(args + sliceSize)) : 0;
	u32 klen = nargs > 1 ? (u32)rd64(args + sliceSize + 8) : 0;
	switch (nargs > 1 ? cmd : 0) {
	case cmdGet: requestGet(key, klen); break;
	case cmdSet: requestSet(key, klen, ptr(rd64(args + 2 * sliceSize)), (u32)rd64(args + 2 * sliceSize + 8)); break;
	case cmdIncr: requestIncr(key, klen); break;
	default:
		error("ERR cstrings: unknown command");
		return 1;
	}
	int wait;
	const u8 *r = submit(&wait);
	if (wait) {
		u8 p[9] = {statusPending};
		u32 h = park(cmd, proto);
		out.len = 0;
		put(&out, p, 9);
		wr32(out.p + 1, h);
		wr32(out.p + 5, (u32)req);
		return 0;
	}
	if (r) done(cmd, proto, r);
	return 1;
}

static i64 answer(void) { return (i64)(u32)out.p << 32 | out.len; }

EXPORT("respike_start") i64 start(u32 n) {
	(void)n; // the Start's size: its layout carries its own lengths
	u8 st = statusDone;
	out.len = 0;
	put(&out, &st, 1);
	run(in.p);
	return answer();
}

EXPORT("respike_batch") i64 batch(u32 n) {
	(void)n;
	const u8 *b = in.p;
	u32 count = rd32(b);
	for (u32 i = 0; i < count; i++) {
		out.len = 0;
		if (!run(b + rd32(b + 4 + 4 * i))) return answer();
		host_reply((u32)out.p, out.len);
	}
	return 0;
}

EXPORT("respike_resume") i64 resume(u32 h, u32 n) {
	(void)n;
	u8 st = statusDone;
	out.len = 0;
	put(&out, &st, 1);
	if (h >= nslots || !slots[h].busy) {
		error("ERR cstrings: resume of an unknown command");
		return answer();
	}
	slots[h].busy = 0;
	const u8 *r = response(in.p);
	if (r) done(slots[h].cmd, (int)slots[h].proto, r);
	return answer();
}

EXPORT("respike_cancel") void cancel(u32 h) {
	if (h < nslots) slots[h].busy = 0;
}
