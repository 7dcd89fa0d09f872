package dev.toolhost.server;

import dev.toolhost.core.spi.Mount;
import jakarta.servlet.Servlet;
import java.util.List;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The mount handler serves the servlets extensions mounted ({@link Mount}), each at its path and
 * everything below it, with asynchronous support; requests to any other path pass on to the next
 * handler. The {@link RequestGuard} in front of it has already checked every request, as for every
 * other route. An error the container raises itself is answered by {@link JsonErrorHandler}.
 * Servlets start with the server, so a servlet's own start fails the host's.
 */
final class MountHandler extends Handler.Wrapper {

  private final List<Mount> mounts;

  /**
   * A handler of the given mounts.
   *
   * @throws IllegalArgumentException when a mount's servlet is not a {@code
   *     jakarta.servlet.Servlet}
   */
  MountHandler(List<Mount> mounts) {
    this.mounts = List.copyOf(mounts);
    ServletContextHandler context = new ServletContextHandler("/");
    context.setErrorHandler(new JsonErrorHandler());
    for (Mount mount : this.mounts) {
      if (!(mount.servlet() instanceof Servlet servlet)) {
        throw new IllegalArgumentException(
            "The servlet mounted at "
                + mount.path()
                + " is a "
                + mount.servlet().getClass().getName()
                + ", not a jakarta.servlet.Servlet.");
      }
      ServletHolder holder = new ServletHolder(servlet);
      holder.setAsyncSupported(true);
      holder.setInitOrder(0);
      context.addServlet(holder, mount.path() + "/*");
    }
    setHandler(context);
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String path = request.getHttpURI().getDecodedPath();
    if (mounts.stream().noneMatch(mount -> mount.covers(path))) {
      return false;
    }
    return super.handle(request, response, callback);
  }
}
