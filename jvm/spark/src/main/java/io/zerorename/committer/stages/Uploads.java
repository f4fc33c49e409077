package io.zerorename.committer.stages;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.records.PendingCommit;
import io.zerorename.committer.records.StoreUrl;

/** Aborting uploads, in parallel on the configured threads; failures gathered. */
final class Uploads {
  private Uploads() {
  }

  static void abortAll(StageConfig c, List<PendingCommit> commits) throws IOException {
    Map<String, String> owned = new java.util.TreeMap<>();
    for (PendingCommit p : commits) {
      owned.put(p.uploadId(), StoreUrl.parse(p.url()).key());
    }
    abort(c, owned);
  }

  /** Abort each upload (upload ID to key); an upload already gone is not an error. */
  static int abort(StageConfig c, Map<String, String> uploads) throws IOException {
    if (uploads.isEmpty()) {
      return 0;
    }
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(c.threads(), uploads.size()));
    try {
      List<Future<Boolean>> futures = new ArrayList<>();
      for (Map.Entry<String, String> e : uploads.entrySet()) {
        futures.add(pool.submit(() -> c.store().abort(e.getValue(), e.getKey())));
      }
      int aborted = 0;
      IOException first = null;
      int failed = 0;
      for (Future<Boolean> f : futures) {
        try {
          if (f.get()) {
            aborted++;
          }
        } catch (ExecutionException e) {
          failed++;
          if (first == null) {
            first = e.getCause() instanceof IOException ? (IOException) e.getCause()
                : new IOException(e.getCause());
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted while aborting uploads");
        }
      }
      c.stats().incr(FencedStatistics.COMMITTER_COMMITS_ABORTED, aborted);
      if (first != null) {
        throw new IOException("could not abort " + failed + " upload(s) of job " + c.jobId()
            + ": " + first.getMessage(), first);
      }
      return aborted;
    } finally {
      pool.shutdownNow();
    }
  }
}
