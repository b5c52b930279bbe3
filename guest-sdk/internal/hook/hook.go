// Package hook connects the SDK's engine to the native test host (sdktest)
// without widening the SDK's public surface.
package hook

// Set by the sdk package's init.
var (
	Start     func(msg []byte) []byte
	Resume    func(handle uint32, msg []byte) []byte
	Cancel    func(handle uint32)
	Manifest  func() []byte
	SetInline func(func(req []byte) ([]byte, bool))
	Batch     func(msg []byte) []byte
	SetReply  func(func(resp []byte))
	SetLog    func(func(level int32, msg string))
)
