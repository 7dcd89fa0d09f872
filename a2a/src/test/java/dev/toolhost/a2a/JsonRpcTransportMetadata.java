package dev.toolhost.a2a;

import io.a2a.server.TransportMetadata;

/**
 * Tells the A2A SDK's card validator that its JSON-RPC transport is served here: the SDK's own
 * server modules declare it for their frameworks (Quarkus), and the interop test serves the SDK's
 * JSON-RPC handler behind a bare JDK HTTP server instead.
 */
public final class JsonRpcTransportMetadata implements TransportMetadata {
  @Override
  public String getTransportProtocol() {
    return "JSONRPC";
  }
}
