package codec

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/respike/respike/guest-sdk/resp"
)

// Final answers (ABI 7).
//
// Most commands end with a trivial step: the store's result of their last
// request becomes the reply (GET: the value, or nil; INCR: the integer;
// SET: +OK), or an error chosen by the result's code. On a store that
// waits, that step costs a second entry into the guest after the request,
// on an instance acquired again, for a few lines of code. A final answer
// (StatusFinal) hands the host the request together with a recipe that
// says how each outcome becomes the reply; the command has then ended on
// the guest's side, and the host answers the client from the store's
// result without calling the guest again.
//
// The answer is, little-endian:
//
//	status   u8   StatusFinal
//	request  u32  the address of the codec.Request in guest memory (as StatusPending)
//	recipe   the rest: a recipe's encoding (Recipe.Bytes)
//
// A recipe is
//
//	version  u8   RecipeVersion
//	call     u8   the call whose outcome picks the reply (usually 0)
//	n        u8   the number of rules, 1 to MaxRecipeRules
//	rules    n × (code i32, action u8, the action's operand)
//
// The first rule whose code equals the call's result code (RecipeAnyCode
// matches every code) gives the reply; a code no rule names answers the
// store error (ActStoreError). A request that failed as a whole (the
// Response's Code is not OK) answers RequestErrorText, as a step would.
// The actions and their operands:
//
//	ActValue       u8 op   the op's value as a bulk string (bytes as they are, an
//	                       integer in decimal, a float in Go's shortest 'g' form,
//	                       anything else the empty string)
//	ActInt         u8 op   the op's value as an integer reply when it is an
//	                       integer, else 0
//	ActNull        –       the null reply: $-1 in RESP2, _ in RESP3
//	ActReply       u16 n, n bytes: a fixed RESP reply (+OK, an error)
//	ActStoreError  –       StoreErrorText of the call's code and message
//	ActRestart     –       run the command again from the start, with
//	                       Start.Restart set (sdk.Ctx.Restarted); only for
//	                       codes after which the call had no effect (RestartSafe)
//
// ABI 8 adds actions for the values of map and list reads, which answer a
// list (HGET's MapGetByKeys answers the values found, zero or one), and
// for lengths. A host of ABI 7 refuses them as malformed; a module that
// uses them declares ABI 8, which such a host refuses at load.
//
//	ActFirst       u8 op   the first item of the op's list value as ActValue
//	                       writes it, or the null reply when the list is empty
//	                       (or the value is not a list)
//	ActLen         u8 op   the length of the op's value as ActValue would write
//	                       it, as an integer reply
//	ActFirstLen    u8 op   the length of the first item of the op's list value
//	                       as ActLen counts it, or 0 when the list is empty
//	ActFirstEach   u8 op, u8 n   an array of n replies, the i-th ActFirst of
//	                       op+i (HMGET: one read per field)
//	ActNulls       u8 n    an array of n null replies (HMGET of a missing key)
//
// The host reads a recipe from a module it does not trust: ParseRecipe
// checks every field against the request before the request runs.

// StatusFinal (ABI 7) ends the command on the guest's side with a store
// request and the recipe of its reply (see above).
const StatusFinal byte = 4

// RecipeVersion is the first byte of a recipe.
const RecipeVersion = 1

// MaxRecipeRules bounds the rules of one recipe.
const MaxRecipeRules = 16

// RecipeAnyCode, as a rule's code, matches every result code.
const RecipeAnyCode Code = -1

// Action is what a recipe's rule replies.
type Action uint8

// Recipe actions.
const (
	ActValue Action = iota + 1
	ActInt
	ActNull
	ActReply
	ActStoreError
	ActRestart
	// ABI 8.
	ActFirst
	ActLen
	ActFirstLen
	ActFirstEach
	ActNulls
)

// maxRecipeReply bounds a fixed reply (ActReply).
const maxRecipeReply = 1 << 12

// Recipe is a prepared recipe: a module builds one per shape of reply,
// once (in a var), and a command sends it with sdk.Ctx.ExecFinal at no
// cost per command but a copy of its bytes. The builder methods panic on
// a use that cannot be right (a module bug, found when its init runs).
type Recipe struct {
	enc []byte
}

// NewRecipe starts a recipe whose rules test the result code of call
// number call of the request.
func NewRecipe(call int) *Recipe {
	if call < 0 || call > 255 {
		panic("codec: recipe call index out of range")
	}
	return &Recipe{enc: []byte{RecipeVersion, byte(call), 0}}
}

// Bytes is the recipe's encoding.
func (r *Recipe) Bytes() []byte { return r.enc }

func (r *Recipe) rule(code Code, a Action) *Recipe {
	if r.enc[2] == MaxRecipeRules {
		panic("codec: too many recipe rules")
	}
	r.enc[2]++
	r.enc = binary.LittleEndian.AppendUint32(r.enc, uint32(code))
	r.enc = append(r.enc, byte(a))
	return r
}

// opRule is rule for an action that reads one op's value.
func (r *Recipe) opRule(code Code, a Action, op int) *Recipe {
	r.rule(code, a)
	r.enc = append(r.enc, recipeOp(op))
	return r
}

func recipeOp(op int) byte {
	if op < 0 || op > 255 {
		panic("codec: recipe op index out of range")
	}
	return byte(op)
}

// Value answers code with op's value as a bulk string.
func (r *Recipe) Value(code Code, op int) *Recipe {
	return r.opRule(code, ActValue, op)
}

// Int answers code with op's value as an integer (0 when the value is not
// an integer, as the built-in modules' kit.IntOf reads it).
func (r *Recipe) Int(code Code, op int) *Recipe {
	return r.opRule(code, ActInt, op)
}

// First answers code with the first item of op's list value as a bulk
// string, or the null reply when the list is empty (ABI 8).
func (r *Recipe) First(code Code, op int) *Recipe {
	return r.opRule(code, ActFirst, op)
}

// Len answers code with the length of op's value in its string form, as an
// integer (ABI 8).
func (r *Recipe) Len(code Code, op int) *Recipe {
	return r.opRule(code, ActLen, op)
}

// FirstLen answers code with the length of the first item of op's list
// value in its string form, or 0 when the list is empty (ABI 8).
func (r *Recipe) FirstLen(code Code, op int) *Recipe {
	return r.opRule(code, ActFirstLen, op)
}

// FirstEach answers code with an array of n replies, the i-th being First
// of op+i (ABI 8). n is 1 to 255 and op+n-1 at most 255.
func (r *Recipe) FirstEach(code Code, op, n int) *Recipe {
	if n < 1 || n > 255 || op+n-1 > 255 {
		panic("codec: recipe op range out of range")
	}
	r.rule(code, ActFirstEach)
	r.enc = append(r.enc, recipeOp(op), byte(n))
	return r
}

// Nulls answers code with an array of n null replies, 1 to 255 (ABI 8).
func (r *Recipe) Nulls(code Code, n int) *Recipe {
	if n < 1 || n > 255 {
		panic("codec: recipe array length out of range")
	}
	r.rule(code, ActNulls)
	r.enc = append(r.enc, byte(n))
	return r
}

// Null answers code with the null reply of the connection's protocol.
func (r *Recipe) Null(code Code) *Recipe { return r.rule(code, ActNull) }

// Reply answers code with reply, a whole RESP reply.
func (r *Recipe) Reply(code Code, reply string) *Recipe {
	if len(reply) < 3 || len(reply) > maxRecipeReply || reply[len(reply)-2:] != "\r\n" {
		panic("codec: a recipe reply must be one RESP reply")
	}
	r.rule(code, ActReply)
	r.enc = binary.LittleEndian.AppendUint16(r.enc, uint16(len(reply)))
	r.enc = append(r.enc, reply...)
	return r
}

// OK answers code with +OK.
func (r *Recipe) OK(code Code) *Recipe { return r.Reply(code, "+OK\r\n") }

// Error answers code with the error reply msg (which starts with its
// code, as "ERR ..." or "WRONGTYPE ...").
func (r *Recipe) Error(code Code, msg string) *Recipe {
	w := resp.Writer{}
	w.Error(msg)
	return r.Reply(code, string(w.Buf))
}

// StoreError answers code with the store error (StoreErrorText), as a
// code no rule names does.
func (r *Recipe) StoreError(code Code) *Recipe { return r.rule(code, ActStoreError) }

// Restart runs the command again from the start when the call ends with
// code: the command sees Restarted. code must be one after which the call
// had no effect (RestartSafe).
func (r *Recipe) Restart(code Code) *Recipe {
	if !RestartSafe(code) {
		panic("codec: a recipe restarts only on a code after which the call had no effect")
	}
	return r.rule(code, ActRestart)
}

// RestartSafe reports whether a call that ended with code certainly had no
// effect, so that running its command again repeats nothing: a condition
// or a type check refused it, or the store refused an operation. OK, a
// timeout, a lost connection or an unknown failure may have applied the
// write, and are never restarted.
func RestartSafe(code Code) bool {
	switch code {
	case NotFound, GenerationError, Exists, BinTypeError, BinNotFound, RecordTooBig,
		OpNotApplicable, FilteredOut, ElementNotFound, ElementExists, Overflow:
		return true
	}
	return false
}

// Rule is one rule of a parsed recipe.
type Rule struct {
	Code   Code
	Action Action
	Op     int    // ActValue, ActInt, ActFirst, ActLen, ActFirstLen, ActFirstEach
	N      int    // ActFirstEach: the number of ops from Op; ActNulls: the nulls
	Reply  []byte // ActReply; aliases the parsed bytes
}

// ParsedRecipe is a recipe checked against its request (ParseRecipe).
type ParsedRecipe struct {
	Call int
	N    int
	// Rules holds the N rules. A slice, not an array of MaxRecipeRules:
	// the host keeps a ParsedRecipe in every command's call state while
	// the command waits on the store, and most recipes have one or two
	// rules, so an array would cost each in-flight command ~700 bytes.
	// ParseRecipe reuses its array.
	Rules []Rule
}

// ErrRecipe reports a malformed recipe.
var ErrRecipe = errors.New("malformed recipe")

// ParseRecipe checks the recipe b against rq, the request it came with,
// and parses it into p; p's replies alias b. The call and op indexes must
// name calls and ops of rq.
func ParseRecipe(b []byte, rq *Request, p *ParsedRecipe) error {
	if len(b) < 3 || b[0] != RecipeVersion || rq.Kind != ReqRecords {
		return ErrRecipe
	}
	call, n := int(b[1]), int(b[2])
	if call >= len(rq.Calls) || n == 0 || n > MaxRecipeRules {
		return ErrRecipe
	}
	nops := len(rq.Calls[call].Ops)
	p.Call, p.N = call, n
	if cap(p.Rules) < n {
		p.Rules = make([]Rule, n)
	}
	p.Rules = p.Rules[:n]
	b = b[3:]
	for i := range n {
		if len(b) < 5 {
			return ErrRecipe
		}
		ru := &p.Rules[i]
		*ru = Rule{Code: Code(int32(binary.LittleEndian.Uint32(b))), Action: Action(b[4])}
		b = b[5:]
		switch ru.Action {
		case ActValue, ActInt, ActFirst, ActLen, ActFirstLen:
			if len(b) < 1 || int(b[0]) >= nops {
				return ErrRecipe
			}
			ru.Op = int(b[0])
			b = b[1:]
		case ActFirstEach:
			if len(b) < 2 || b[1] == 0 || int(b[0])+int(b[1]) > nops {
				return ErrRecipe
			}
			ru.Op, ru.N = int(b[0]), int(b[1])
			b = b[2:]
		case ActNulls:
			if len(b) < 1 || b[0] == 0 {
				return ErrRecipe
			}
			ru.N = int(b[0])
			b = b[1:]
		case ActNull, ActStoreError:
		case ActRestart:
			if !RestartSafe(ru.Code) {
				return ErrRecipe
			}
		case ActReply:
			if len(b) < 2 {
				return ErrRecipe
			}
			m := int(binary.LittleEndian.Uint16(b))
			b = b[2:]
			if m < 3 || m > maxRecipeReply || m > len(b) || b[m-2] != '\r' || b[m-1] != '\n' {
				return ErrRecipe
			}
			ru.Reply = b[:m:m]
			b = b[m:]
		default:
			return ErrRecipe
		}
	}
	if len(b) != 0 {
		return ErrRecipe
	}
	return nil
}

// Apply appends to dst the reply the recipe gives for resp, the response
// to its request, in RESP version proto; restart reports that the command
// must run again from the start instead (nothing is appended).
func (p *ParsedRecipe) Apply(dst []byte, proto int, r *Response) (out []byte, restart bool) {
	w := resp.Writer{Buf: dst, Proto: proto}
	if r.Code != OK {
		w.Error(RequestErrorText(r.Code, r.Msg))
		return w.Buf, false
	}
	if p.Call >= len(r.Results) {
		w.Error("ERR respike: malformed store response")
		return w.Buf, false
	}
	res := &r.Results[p.Call]
	for i := range p.N {
		ru := &p.Rules[i]
		if ru.Code != res.Code && ru.Code != RecipeAnyCode {
			continue
		}
		switch ru.Action {
		case ActValue:
			if ru.Op >= len(res.Values) {
				break
			}
			appendStr(&w, &res.Values[ru.Op])
			return w.Buf, false
		case ActInt:
			if ru.Op >= len(res.Values) {
				break
			}
			n := int64(0)
			if v := &res.Values[ru.Op]; v.Kind == KindInt {
				n = v.Int
			}
			w.Int(n)
			return w.Buf, false
		case ActFirst:
			if ru.Op >= len(res.Values) {
				break
			}
			appendFirst(&w, &res.Values[ru.Op])
			return w.Buf, false
		case ActLen:
			if ru.Op >= len(res.Values) {
				break
			}
			w.Int(int64(strLen(&res.Values[ru.Op])))
			return w.Buf, false
		case ActFirstLen:
			if ru.Op >= len(res.Values) {
				break
			}
			n := 0
			if l := res.Values[ru.Op].List; len(l) > 0 {
				n = strLen(&l[0])
			}
			w.Int(int64(n))
			return w.Buf, false
		case ActFirstEach:
			if ru.Op+ru.N > len(res.Values) {
				break
			}
			w.Array(ru.N)
			for i := ru.Op; i < ru.Op+ru.N; i++ {
				appendFirst(&w, &res.Values[i])
			}
			return w.Buf, false
		case ActNulls:
			w.Array(ru.N)
			for range ru.N {
				w.Null()
			}
			return w.Buf, false
		case ActNull:
			w.Null()
			return w.Buf, false
		case ActReply:
			return append(w.Buf, ru.Reply...), false
		case ActRestart:
			return dst, true
		}
		break // ActStoreError, or an op the store did not answer
	}
	w.Error(StoreErrorText(res.Code, res.Msg))
	return w.Buf, false
}

// appendStr writes a stored value as a Redis string reply, as the
// built-in modules' kit.ReplyStr does.
func appendStr(w *resp.Writer, v *Value) {
	switch v.Kind {
	case KindInt:
		w.BulkInt(v.Int)
	case KindFloat:
		var tmp [32]byte
		w.Bulk(strconv.AppendFloat(tmp[:0], v.Float, 'g', -1, 64))
	default:
		w.Bulk(v.Bytes)
	}
}

// appendFirst writes the first item of a list value as appendStr does, or
// the null reply when there is none.
func appendFirst(w *resp.Writer, v *Value) {
	if len(v.List) == 0 {
		w.Null()
		return
	}
	appendStr(w, &v.List[0])
}

// strLen is the length of what appendStr writes for v, as the built-in
// modules' kit.StrLen counts it.
func strLen(v *Value) int {
	var tmp [32]byte
	switch v.Kind {
	case KindInt:
		return len(strconv.AppendInt(tmp[:0], v.Int, 10))
	case KindFloat:
		return len(strconv.AppendFloat(tmp[:0], v.Float, 'g', -1, 64))
	}
	return len(v.Bytes)
}

// StoreErrorText is the error text for a failed call: it names the code so
// an operator can look it up, and says what the client can do. The
// built-in modules answer it (kit.StoreError), and so does the host for a
// final answer's recipe (ActStoreError): one function, so the two never
// differ.
func StoreErrorText(code Code, msg string) string {
	var what string
	switch code {
	case RecordTooBig:
		what = "the value is too large for the store's record size limit"
	case Timeout:
		what = "store timeout; the command may or may not have been applied"
	case BackendUnavail:
		what = "store unavailable"
	case BackendError, ServerError:
		what = "store error"
	case ParameterError:
		what = "the store refused a parameter"
	case InvalidOperation:
		what = "the module sent an invalid request"
	default:
		what = "unexpected store result"
	}
	s := "ERR respike: " + what + " (code " + strconv.Itoa(int(code)) + ")"
	if msg != "" {
		s += ": " + msg
	}
	return s
}

// RequestErrorText is the error text for a request that failed as a whole
// (Response.Code not OK): the SDK answers it for a step's request, and the
// host for a final answer's.
func RequestErrorText(code Code, msg string) string {
	switch code {
	case ParameterError:
		if msg == ErrDBRange {
			return msg
		}
	case BackendUnavail:
		return "ERR backend unavailable: " + msg
	case Timeout:
		return "ERR backend timeout: " + msg
	}
	return "ERR backend error (code " + strconv.Itoa(int(code)) + "): " + msg
}
