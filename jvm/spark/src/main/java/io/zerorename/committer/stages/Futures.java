package io.zerorename.committer.stages;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/** Waiting for a request sent on another thread, its failure thrown as the request threw it. */
final class Futures {
  private Futures() {
  }

  /**
   * The answer of {@code request}, or its failure as thrown on the thread that sent it (an
   * {@link IOException}, a {@link RuntimeException} or an {@link Error}; anything else wrapped
   * in an {@link IOException}). Interrupted while waiting: {@link InterruptedIOException}
   * with {@code waitingFor}'s message, the thread's interrupt flag set again.
   */
  static <T> T result(Future<T> request, Supplier<String> waitingFor) throws IOException {
    try {
      return request.get();
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      if (cause instanceof Error) {
        throw (Error) cause;
      }
      throw new IOException(cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while " + waitingFor.get());
    }
  }
}
