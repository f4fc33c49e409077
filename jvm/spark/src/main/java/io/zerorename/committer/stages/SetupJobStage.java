package io.zerorename.committer.stages;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.fs.PathExistsException;

import io.zerorename.committer.ConditionalWriteUnsupportedException;
import io.zerorename.committer.FencedOptions;
import io.zerorename.committer.FencedStatistics;
import io.zerorename.committer.JobAlreadyCommittedException;
import io.zerorename.committer.RacyConditionalWritesException;
import io.zerorename.committer.StoreFencing;
import io.zerorename.committer.records.CommitRecord;
import io.zerorename.committer.records.Json;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PreconditionFailedException;
import io.zerorename.committer.store.StoreRequestException;

/**
 * Job setup: refuse a destination that is a file, check the store fences
 * ({@link StoreFencing}; refuse one that does not, before anything is written), create the job
 * attempt's marker with {@code If-None-Match: *} and, unless the store check has already seen
 * it refused, try again (the store must refuse), then roll forward or back: a job whose commit
 * record exists is published (completed, {@code _SUCCESS}, cleaned) and
 * {@link JobAlreadyCommittedException} raised; otherwise whatever an earlier attempt of the job
 * left is aborted and deleted. A job no earlier run can have touched (a Spark write's own job
 * ID, first attempt, marker created here: {@link #freshJob}) skips that: nothing to read or
 * list. The destination's HEAD goes out beside the store check and the marker
 * ({@link DestinationCheck}).
 */
public final class SetupJobStage extends AbstractStage<Void, StoreFencing.Decision> {

  public SetupJobStage(StageConfig config) {
    super(FencedStatistics.JOB_STAGE_SETUP, config);
  }

  @Override
  protected StoreFencing.Decision executeStage(Void args) throws IOException {
    StageConfig c = config();
    StoreFencing.Decision decision;
    boolean created;
    try (DestinationCheck dest = DestinationCheck.start(c)) {
      try {
        decision = checkStore(c);
        created = probeMarker(c, decision);
      } catch (IOException | RuntimeException e) {
        dest.refuseFile(false, e);
        throw e;
      }
      dest.refuseFile(created, null);
    }
    if (created && freshJob(c)) {
      LOG.debug("job {}: a write's own job ID, first attempt: nothing earlier to roll forward "
          + "or clear", c.jobId());
      return decision;
    }
    CommitRecord commit = CommitRecords.read(c);
    if (commit != null) {
      SuccessData success = new Publisher(c).publish(commit, null);
      c.stats().incr(FencedStatistics.COMMITTER_JOBS_ROLLED_FORWARD);
      throw new JobAlreadyCommittedException(url(c.layout().commitRecord()), "job "
          + c.jobId() + " was already committed by job attempt " + commit.jobAttempt()
          + "; its output is published (rolled forward, " + success.files().size()
          + " files): do not run its tasks again");
    }
    new JobClearer(c).clear(null, true);
    return decision;
  }

  /**
   * The HEAD of the destination's key, which refuses a destination that is a file, sent on its
   * own thread beside the store check and the marker's PUT: setup waits one round trip for
   * both, not two. Where it finds a file, the marker just created (an object below the file's
   * key, which S3 allows) is deleted again and the file is the error reported. With one
   * thread the HEAD goes first, alone, as every request then goes one after the other.
   */
  private static final class DestinationCheck implements AutoCloseable {
    private final StageConfig c;
    private final ExecutorService pool;
    private final Future<ObjectEntry> head;

    private DestinationCheck(StageConfig c, ExecutorService pool, Future<ObjectEntry> head) {
      this.c = c;
      this.pool = pool;
      this.head = head;
    }

    /** Send the HEAD; with one thread ({@link StageConfig#threads}: every request in the
     *  caller's order) make it here and refuse a file before anything is written. */
    static DestinationCheck start(StageConfig c) throws IOException {
      String key = c.layout().dest().key().replaceAll("/+$", "");
      if (key.isEmpty()) {
        return new DestinationCheck(c, null, CompletableFuture.completedFuture(null));
      }
      if (c.threads() <= 1) {
        DestinationCheck done = new DestinationCheck(c, null,
            CompletableFuture.completedFuture(c.store().head(key)));
        done.refuseFile(false, null);
        return done;
      }
      ExecutorService pool = Executors.newSingleThreadExecutor();
      return new DestinationCheck(c, pool, pool.submit(() -> c.store().head(key)));
    }

    /**
     * Throw {@link org.apache.hadoop.fs.PathExistsException} where the destination is a file
     * ({@code failed}, the error of the store check or the marker, rides along suppressed),
     * deleting the marker first if {@code created}. The HEAD's own failure is thrown as it
     * came; with none of these, return.
     */
    void refuseFile(boolean created, Throwable failed) throws IOException {
      ObjectEntry file;
      try {
        file = Futures.result(head, () -> "checking that " + c.layout().destUrl()
            + " is not a file");
      } catch (InterruptedIOException e) {
        throw e;
      } catch (IOException | RuntimeException e) {
        if (failed != null) {
          return; // the setup's own failure is reported; the HEAD's adds nothing to it
        }
        throw e;
      }
      if (file == null) {
        return;
      }
      if (created) {
        c.store().delete(List.of(c.layout().marker()));
      }
      PathExistsException e = new PathExistsException(c.layout().destUrl(),
          "the destination is a file, not a directory");
      if (failed != null) {
        e.addSuppressed(failed);
      }
      throw e;
    }

    /** Stop the HEAD if it still runs (setup failed before asking for it) and wait for it. */
    @Override
    public void close() {
      if (pool != null) {
        pool.shutdownNow();
        try {
          pool.awaitTermination(CleanupJobStage.Reads.CLOSE_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * Whether no earlier run can have left anything of this job: its ID is the one Spark
   * generates for each write ({@value FencedOptions#SPARK_UUID}, a random UUID, set by Spark
   * for that write alone and read only when no {@value FencedOptions#S3A_UUID} names the job),
   * and this is its first job attempt, whose marker this setup has just created (an earlier
   * setup of this attempt would have left it, or a refused PUT said so). Then there is no
   * commit record to roll forward, and no record, work object or upload of the job to clear,
   * so setup reads and lists nothing; uploads of other, dead jobs are still aborted by this
   * job's cleanup. A job ID given by the user (to roll a job forward) or by Hadoop's
   * {@code JobID} takes the full setup.
   */
  private static boolean freshJob(StageConfig c) {
    return c.jobAttempt() == 0 && FencedOptions.SPARK_UUID.equals(c.jobIdSource());
  }

  private StoreFencing.Decision checkStore(StageConfig c) throws IOException {
    StoreFencing.Decision d = StoreFencing.decide(c.store(), c.layout().destPrefix(),
        c.conditionalEnabled());
    if (d.canFence()) {
      return d;
    }
    if (d.support() == StoreFencing.Support.RACY) {
      if (c.warnOnRacyStore()) {
        LOG.warn("zerorename: fenced committer on {} although {}: two attempts of one task "
            + "could both commit there; running because {}=warn overrides the check",
            c.layout().destUrl(), d.describe(), FencedOptions.STORE_CHECK);
        return d;
      }
      throw new RacyConditionalWritesException(c.layout().destUrl(), "store "
          + c.store().name() + " cannot fence commits: " + d.maxWinners() + " of "
          + StoreFencing.RACERS + " racing If-None-Match: * writers won one key ("
          + d.histogram() + "), so two attempts of one task could both commit. Use the magic "
          + "committer (" + FencedOptions.COMMITTER + "=auto picks it here), or set "
          + FencedOptions.STORE_CHECK + "=warn to run fenced anyway, accepting that risk");
    }
    throw unsupported(c, d.describe());
  }

  static ConditionalWriteUnsupportedException unsupported(StageConfig c, String why) {
    return new ConditionalWriteUnsupportedException(c.layout().url(c.layout().marker()),
        "store " + c.store().name() + " cannot fence commits: " + why + ". The fenced "
        + "committer needs conditional PUT (If-None-Match: *); use S3A's magic committer on "
        + "this store (" + FencedOptions.COMMITTER + "=auto picks it)");
  }

  private static byte[] body(StageConfig c, int n) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("jobId", c.jobId());
    m.put("jobAttempt", (long) c.jobAttempt());
    m.put("committer", FencedOptions.NAME);
    m.put("probe", (long) n);
    return Json.spaced(m);
  }

  /**
   * Create the marker, then try again: the store must refuse (an earlier marker: too).
   * Returns whether this call created the marker.
   *
   * <p>The second PUT is only a check of the store, and is not sent when this JVM's store
   * check ({@link StoreFencing}, once per store) has already sent that very request to this
   * store and seen it refused ({@link StoreFencing.Support#FENCES}, or
   * {@link StoreFencing.Support#RACY} run anyway): it would measure nothing new. Nothing of
   * the protocol depends on the marker's refusal: each decision (a task's record, the job's
   * commit record) is its own conditional PUT. A store trusted without measuring
   * ({@link StoreFencing.Support#ATOMIC}) still gets the second PUT.
   */
  private boolean probeMarker(StageConfig c, StoreFencing.Decision decision)
      throws IOException {
    String marker = c.layout().marker();
    boolean measured = decision.support() == StoreFencing.Support.FENCES
        || decision.support() == StoreFencing.Support.RACY;
    boolean created = false;
    try {
      c.store().put(marker, body(c, 1), true);
      created = true;
      if (measured) {
        LOG.debug("job {}: marker created; the store check already saw a second "
            + "If-None-Match: * PUT refused on {}", c.jobId(), c.store().name());
        return true;
      }
      c.store().put(marker, body(c, 2), true);
    } catch (PreconditionFailedException refused) {
      c.stats().incr(FencedStatistics.COMMITTER_CONDITIONAL_PUT_PROBE_REFUSED);
      return created;
    } catch (StoreRequestException e) {
      if (e.rejectsCondition()) {
        throw unsupported(c, "it rejected If-None-Match (" + e.status() + " " + e.code() + ")");
      }
      throw e;
    }
    c.store().delete(List.of(marker));
    throw unsupported(c, "it accepted a second PUT with If-None-Match: * over an existing "
        + "object");
  }
}
