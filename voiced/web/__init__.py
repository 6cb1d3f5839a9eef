"""The web view: HTTP API, SSE stream, dashboard and metrics, served from the daemon's event loop."""
