package server

import "io"

// rawIO is a connection's raw socket (rawio_linux.go): its reads and
// writes, and the two things the rest of the server must do differently
// because its reads stay inside one long-lived poller call.
type rawIO interface {
	io.ReadWriter
	// hangUp ends the connection from another goroutine (CLIENT KILL,
	// shutdown, a MONITOR too slow) without waiting for the connection's
	// own goroutine, which then closes it; net.Conn.Close would wait for
	// the read that the connection's goroutine keeps open.
	hangUp()
	// release ends that read, so that the net.Conn can be closed; the
	// connection's goroutine calls it once, when it is done reading.
	release()
}
