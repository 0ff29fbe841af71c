package logging

import (
	"fmt"
	"io"

	"github.com/go-logr/logr"
	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// New returns a logger writing to w. Level is debug (logr's V(1) and
// below), info or error.
func New(level string, w io.Writer) (logr.Logger, error) {
	var l zapcore.Level
	switch level {
	case "debug":
		l = zapcore.DebugLevel
	case "info":
		l = zapcore.InfoLevel
	case "error":
		l = zapcore.ErrorLevel
	default:
		return logr.Discard(), fmt.Errorf("unknown log level %q: want debug, info or error", level)
	}
	enc := zap.NewProductionEncoderConfig()
	enc.EncodeTime = zapcore.ISO8601TimeEncoder
	core := zapcore.NewCore(zapcore.NewJSONEncoder(enc), zapcore.AddSync(w), l)
	return zapr.NewLogger(zap.New(core, zap.AddCaller())), nil
}
