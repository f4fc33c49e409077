package zerorename.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIOException;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

import io.zerorename.committer.FencedCommitter;
import io.zerorename.committer.FencedLayout;
import io.zerorename.committer.FencedOptions;
import io.zerorename.committer.records.CommittedFile;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.stages.TrackedUploads;
import io.zerorename.committer.store.CommitStore;

/**
 * The benchmark's lower bound inside Spark's own writer, the JVM form of the minimal strategy
 * of the earlier benchmarks ({@code bench/strategies.py: MinimalMultipart}): each task's files
 * become uncompleted multipart uploads, the driver completes them all and PUTs
 * {@code _SUCCESS}; nothing else is sent. Not a committer to use: it keeps no record, so a
 * failed driver leaves uploads nobody can find, and two attempts of a task could both be
 * published. Never in the production jar.
 *
 * <ul>
 *   <li>Task output exactly as zerorename's JVM {@code fenced} writes it: files are created
 *   under the attempt's S3A magic path ({@link FencedLayout#workDir}), which S3A turns into an
 *   uncompleted upload of the final key, and with S3A's in-memory commit tracking (which this
 *   committer requires) nothing else; task commit takes the uploads from S3A's tracker (no
 *   request) and drops them from it.</li>
 *   <li>The task's uploads reach the driver in its commit message
 *   ({@link MinimalCommitProtocol}), which hands the accepted tasks' uploads to
 *   {@link #useUploads}.</li>
 *   <li>Job setup and task setup send nothing. Job commit completes every upload, in parallel
 *   on {@value FencedOptions#THREADS} threads as {@code fenced} does, without conditions,
 *   then PUTs {@code _SUCCESS} (committer {@value #NAME}). Abort aborts the uploads it knows:
 *   a task's own, or the accepted tasks' on the driver.</li>
 * </ul>
 */
public class MinimalCommitter extends PathOutputCommitter {
  public static final String NAME = "minimal";

  private final Path outputPath;
  private final TaskAttemptContext task;
  private final Configuration conf;
  private final FencedLayout layout;
  private final String jobIdSource;
  private CommitStore store;
  private TrackedUploads tracked;
  /** The uploads of this object's last task commit (what its commit message carries). */
  private volatile List<MinimalUpload> taskUploads = List.of();
  /** Spark's protocol: every accepted task's uploads, for the next job commit (null: none
   *  handed over). */
  private List<MinimalUpload> jobUploads;
  /** Spark's protocol: the uploads of the tasks accepted so far, for an abort. */
  private List<MinimalUpload> accepted = List.of();

  public MinimalCommitter(Path outputPath, TaskAttemptContext context) throws IOException {
    this(outputPath, context, context);
  }

  public MinimalCommitter(Path outputPath, JobContext context) throws IOException {
    this(outputPath, context, null);
  }

  private MinimalCommitter(Path outputPath, JobContext context, TaskAttemptContext task)
      throws IOException {
    super(outputPath, context);
    this.outputPath = outputPath;
    this.task = task;
    this.conf = context.getConfiguration();
    String[] id = FencedCommitter.jobId(conf, context);
    this.jobIdSource = id[1];
    this.layout = new FencedLayout(FencedCommitter.destOf(outputPath), id[0],
        conf.getInt("mapreduce.job.application.attempt.id", 0));
  }

  /** Use this store instead of the destination's (tests). */
  public synchronized MinimalCommitter withStore(CommitStore s) {
    this.store = s;
    return this;
  }

  /** Use this tracker instead of S3A's in-memory one (tests). */
  public synchronized MinimalCommitter withTracker(TrackedUploads t) {
    this.tracked = t;
    return this;
  }

  /** The destination's store: the client {@code fenced} uses (one per bucket, endpoint and
   *  key, per JVM). */
  private synchronized CommitStore store() {
    if (store == null) {
      store = FencedCommitter.storeFor(conf, layout.dest());
    }
    return store;
  }

  /** S3A's in-memory magic tracker; refuses a destination whose filesystem does not keep the
   *  magic commits in memory (its tasks' uploads would be in {@code .pending} objects, which
   *  this committer does not read). */
  private synchronized TrackedUploads tracker() throws IOException {
    if (tracked == null) {
      FileSystem fs = outputPath.getFileSystem(conf);
      if (!fs.getConf().getBoolean(FencedOptions.S3A_TRACK_IN_MEMORY, false)) {
        throw new PathIOException(outputPath.toString(), "the minimal committer needs S3A's "
            + "in-memory magic commit tracking on the destination's filesystem: set "
            + "fs.s3a.bucket." + layout.dest().bucket() + "."
            + FencedOptions.S3A_TRACK_IN_MEMORY.substring("fs.s3a.".length()) + "=true");
      }
      tracked = new io.zerorename.committer.s3a.S3AMemoryUploads();
    }
    return tracked;
  }

  @Override
  public Path getOutputPath() {
    return outputPath;
  }

  @Override
  public Path getWorkPath() throws IOException {
    return layout.workPath(outputPath, task);
  }

  private String workDir(TaskAttemptContext context) {
    return layout.workDir(context.getTaskAttemptID().toString());
  }

  @Override
  public void setupJob(JobContext context) throws IOException {
    tracker(); // refuse a destination without in-memory tracking before any task runs
  }

  @Override
  public void setupTask(TaskAttemptContext context) throws IOException {
    taskUploads = List.of();
  }

  private List<MinimalUpload> held(TaskAttemptContext context) throws IOException {
    List<MinimalUpload> out = new ArrayList<>();
    for (TrackedUploads.Upload u : tracker().uploads(context.getTaskAttemptID().toString(),
        layout.dest().bucket(), workDir(context))) {
      out.add(MinimalUpload.of(u));
    }
    return out;
  }

  private void forget(TaskAttemptContext context) throws IOException {
    tracker().forget(context.getTaskAttemptID().toString(), layout.dest().bucket(),
        workDir(context));
  }

  @Override
  public boolean needsTaskCommit(TaskAttemptContext context) throws IOException {
    return !held(context).isEmpty();
  }

  /** The attempt's uploads, from S3A's tracker, for its commit message: no request. */
  @Override
  public void commitTask(TaskAttemptContext context) throws IOException {
    taskUploads = List.copyOf(held(context));
    forget(context);
  }

  /** The uploads this object's last task commit took (its commit message's). */
  public List<MinimalUpload> taskUploads() {
    return taskUploads;
  }

  @Override
  public void abortTask(TaskAttemptContext context) throws IOException {
    List<MinimalUpload> mine = held(context);
    taskUploads = List.of();
    try {
      abort(mine);
    } finally {
      forget(context);
    }
  }

  /** Spark's protocol: the next job commit completes these, the accepted tasks' uploads. */
  public synchronized void useUploads(Collection<MinimalUpload> uploads) {
    jobUploads = List.copyOf(uploads);
  }

  /** Spark's protocol: the uploads of the tasks accepted so far, which an abort aborts. */
  public synchronized void abortWithUploads(Collection<MinimalUpload> uploads) {
    accepted = List.copyOf(uploads);
  }

  /** Complete every upload handed over (parallel), then PUT {@code _SUCCESS}. */
  @Override
  public void commitJob(JobContext context) throws IOException {
    List<MinimalUpload> uploads;
    synchronized (this) {
      uploads = jobUploads;
      jobUploads = null;
    }
    if (uploads == null) {
      throw new PathIOException(outputPath.toString(), "the minimal committer's job commit "
          + "completes the uploads its tasks' commit messages carry, and none were handed "
          + "over: write through Spark with spark.sql.sources.commitProtocolClass="
          + MinimalCommitProtocol.class.getName());
    }
    CommitStore s = store();
    int threads = conf.getInt(FencedOptions.THREADS, FencedOptions.DEFAULT_THREADS);
    List<CommittedFile> files = inParallel(uploads, threads, u -> new CommittedFile(
        layout.url(u.key()), u.length(), s.complete(u.key(), u.uploadId(), u.etags(), false)));
    List<String> names = new ArrayList<>();
    for (CommittedFile f : files) {
      names.add(f.url());
    }
    Map<String, String> diagnostics = new TreeMap<>();
    diagnostics.put("committer.class", getClass().getName());
    SuccessData success = new SuccessData(NAME, layout.jobId(), jobIdSource,
        System.currentTimeMillis(), "", "the benchmark's minimal committer", true, names,
        Map.of(), diagnostics, Map.of(), "commit_job", files);
    s.put(layout.success(), success.toBytes(), false);
  }

  @Override
  public void abortJob(JobContext context, JobStatus.State state) throws IOException {
    List<MinimalUpload> known = new ArrayList<>();
    synchronized (this) {
      known.addAll(accepted);
      if (jobUploads != null) {
        known.addAll(jobUploads);
      }
      jobUploads = null;
    }
    abort(known);
  }

  private void abort(List<MinimalUpload> uploads) throws IOException {
    CommitStore s = uploads.isEmpty() ? null : store();
    inParallel(new ArrayList<>(new java.util.LinkedHashSet<>(uploads)),
        conf.getInt(FencedOptions.THREADS, FencedOptions.DEFAULT_THREADS),
        u -> s.abort(u.key(), u.uploadId()));
  }

  /** One request per upload, on up to {@code threads} threads; the first failure thrown. */
  private <T> List<T> inParallel(List<MinimalUpload> uploads, int threads, Request<T> request)
      throws IOException {
    List<T> out = new ArrayList<>();
    if (uploads.isEmpty()) {
      return out;
    }
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, Math.min(threads,
        uploads.size())));
    try {
      List<Future<T>> futures = new ArrayList<>();
      for (MinimalUpload u : uploads) {
        futures.add(pool.submit(() -> request.send(u)));
      }
      IOException first = null;
      for (Future<T> f : futures) {
        try {
          out.add(f.get());
        } catch (ExecutionException e) {
          if (first == null) {
            first = e.getCause() instanceof IOException ? (IOException) e.getCause()
                : new IOException(e.getCause());
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new java.io.InterruptedIOException("interrupted: " + outputPath);
        }
      }
      if (first != null) {
        throw first;
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  /** One request about one upload. */
  @FunctionalInterface
  private interface Request<T> {
    T send(MinimalUpload u) throws IOException;
  }

  @Override
  public String toString() {
    return "MinimalCommitter{dest=" + layout.destUrl() + ", job=" + layout.jobId() + "}";
  }
}
