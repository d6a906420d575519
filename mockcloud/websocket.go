package mockcloud

import (
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const (
	// idleLimit is how long a connection may stay silent (no heartbeat, ping
	// or other frame) before it is dropped; the reference client sends a
	// heartbeat every 27.8 s, so this allows four to go missing.
	idleLimit = 2 * time.Minute
	writeWait = 10 * time.Second
	// sendQueue bounds the frames queued for one client; a client that falls
	// this far behind is cut rather than let it slow the cloud down.
	sendQueue = 4096
)

var upgrader = websocket.Upgrader{
	// Any origin: the changefeed is a server-to-server API.
	CheckOrigin: func(*http.Request) bool { return true },
}

// wsConn is one changefeed connection: a reader (serveFeed) and a writer
// (writeLoop) goroutine around one websocket.
type wsConn struct {
	ws   *websocket.Conn
	log  *slog.Logger // set again by hub.register, under hub.mu like every send
	out  chan []byte
	done chan struct{}
	once sync.Once
}

// send queues one text frame without blocking.
func (c *wsConn) send(b []byte) {
	select {
	case c.out <- b:
	case <-c.done:
	default:
		c.log.Warn("changefeed client too slow, dropping its connection")
		c.cut()
	}
}

// cut closes the connection without a close frame.
func (c *wsConn) cut() {
	c.once.Do(func() {
		close(c.done)
		c.ws.Close()
	})
}

// writeLoop writes every queued frame as one unfragmented text frame:
// gorilla's WriteMessage on a server connection without compression always
// writes a single final frame, and the reference client stalls forever on
// a fragmented message.
func (c *wsConn) writeLoop() {
	for {
		select {
		case b := <-c.out:
			c.ws.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.ws.WriteMessage(websocket.TextMessage, b); err != nil {
				c.cut()
				return
			}
		case <-c.done:
			return
		}
	}
}

// closeWith sends a normal-closure close frame with reason, then reads until
// the client answers or gives up, so that the close frame is not lost to a
// reset from unread input.
func (c *wsConn) closeWith(reason string) {
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, reason)
	if err := c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(writeWait)); err != nil {
		return
	}
	c.ws.SetReadDeadline(time.Now().Add(writeWait))
	for {
		if _, _, err := c.ws.ReadMessage(); err != nil {
			return
		}
	}
}

// serveChangefeed answers GET /changefeeds: the resource list for a plain
// GET, the changefeed for a websocket upgrade.
func (c *Cloud) serveChangefeed(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		writeJSON(w, http.StatusOK, c.feed.resources)
		return
	}
	v2 := wantsV2(r.Header.Get("Accept-Version"))
	if c.v2Only && !v2 {
		c.refuse(w, r, &refusal{status: http.StatusBadRequest,
			body: apiError{Code: "InvalidVersion", Message: "GET /changefeeds supports versions: 2.0.0"}})
		return
	}
	// Old reference clients send no Sec-WebSocket-Version; gorilla would
	// answer 400 and such a client then hangs without a word. Version 13 is
	// the only one anyone speaks, so assume it.
	if r.Header.Get("Sec-Websocket-Version") == "" {
		r.Header.Set("Sec-Websocket-Version", "13")
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		c.log.Warn("changefeed upgrade failed", "remote", r.RemoteAddr, "err", err)
		return // Upgrade has answered the client
	}
	conn := &wsConn{ws: ws, log: c.log.With("remote", r.RemoteAddr),
		out: make(chan []byte, sendQueue), done: make(chan struct{})}
	c.feed.add(conn)
	go conn.writeLoop()
	c.feed.serveFeed(conn, v2, func(reason string) { c.recordRefusal(r, "changefeed closed: "+reason) })
}

// serveFeed reads the registration, then reads and ignores everything else
// (the client's heartbeat frames) until the connection ends; pings are
// answered by the ping handler during those reads. A registration the
// reference publisher would refuse is handed to refused before the
// connection is closed with its reason.
func (h *hub) serveFeed(conn *wsConn, v2 bool, refused func(reason string)) {
	defer h.detach(conn)
	defer conn.cut()
	ws := conn.ws
	ws.SetReadDeadline(time.Now().Add(idleLimit))
	ws.SetPingHandler(func(data string) error {
		ws.SetReadDeadline(time.Now().Add(idleLimit))
		err := ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(writeWait))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	_, msg, err := ws.ReadMessage()
	if err != nil {
		return
	}
	sub, reason := parseRegistration(msg, v2, h.resources)
	if reason != "" {
		refused(reason)
		conn.closeWith(reason)
		return
	}
	h.register(conn, sub.instance, sub.subs, sub.bootstrap(v2, h.resources))
	conn.log.Info("changefeed registration accepted", "v2", v2)
	for {
		ws.SetReadDeadline(time.Now().Add(idleLimit))
		if _, _, err := ws.ReadMessage(); err != nil {
			return
		}
	}
}
