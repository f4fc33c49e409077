package zerorename.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIOException;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.JobContextImpl;
import org.apache.hadoop.mapreduce.task.TaskAttemptContextImpl;
import org.junit.jupiter.api.Test;

import io.zerorename.committer.FencedOptions;
import io.zerorename.committer.records.SuccessData;
import io.zerorename.committer.stages.TrackedUploads;
import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ObjectEntry;
import io.zerorename.committer.store.PendingUpload;

/** What the benchmark's minimal committer sends: nothing in setup and task commit, one
 *  complete per file (in parallel) and one PUT in job commit, one abort per known upload. */
class TestMinimalCommitter {
  static final Path DEST = new Path("s3a://bucket/out");

  /** Every request, as "OP key": the committer's only way to the store. */
  static final class CountingStore implements CommitStore {
    final List<String> requests = new CopyOnWriteArrayList<>();
    final Map<String, byte[]> objects = new ConcurrentHashMap<>();
    /** Completes wait here for each other: more than one must be in flight at once. */
    CyclicBarrier together;

    @Override
    public String name() {
      return "counting";
    }

    @Override
    public void put(String key, byte[] data, boolean ifNoneMatch) {
      requests.add("PUT " + key + (ifNoneMatch ? " if-none-match" : ""));
      objects.put(key, data);
    }

    @Override
    public byte[] get(String key) {
      requests.add("GET " + key);
      return objects.get(key);
    }

    @Override
    public ObjectEntry head(String key) {
      requests.add("HEAD " + key);
      return null;
    }

    @Override
    public void delete(Collection<String> keys) {
      requests.add("DELETE " + keys);
    }

    @Override
    public List<ObjectEntry> list(String prefix) {
      requests.add("LIST " + prefix);
      return List.of();
    }

    @Override
    public List<String> listPrefixes(String prefix) {
      requests.add("LIST-PREFIXES " + prefix);
      return List.of();
    }

    @Override
    public List<PendingUpload> listUploads(String prefix) {
      requests.add("LIST-UPLOADS " + prefix);
      return List.of();
    }

    @Override
    public String complete(String key, String uploadId, List<String> etags, boolean ifNoneMatch)
        throws IOException {
      if (together != null) {
        try {
          together.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
          throw new IOException("completes did not run in parallel: " + e, e);
        }
      }
      requests.add("COMPLETE " + key + " " + uploadId + (ifNoneMatch ? " if-none-match" : ""));
      return "etag-" + uploadId;
    }

    @Override
    public boolean abort(String key, String uploadId) {
      requests.add("ABORT " + key + " " + uploadId);
      return true;
    }
  }

  /** S3A's in-memory tracker as a map: attempt ID to its uploads. */
  static final class Tracker implements TrackedUploads {
    final Map<String, List<Upload>> held = new ConcurrentHashMap<>();

    void write(String attempt, String key) {
      held.computeIfAbsent(attempt, a -> new CopyOnWriteArrayList<>()).add(
          new Upload(key, "u-" + key, List.of("e1"), 10, 1));
    }

    @Override
    public List<Upload> uploads(String attemptId, String bucket, String workDir) {
      return new ArrayList<>(held.getOrDefault(attemptId, List.of()));
    }

    @Override
    public int forget(String attemptId, String bucket, String workDir) {
      List<Upload> gone = held.remove(attemptId);
      return gone == null ? 0 : gone.size();
    }
  }

  final CountingStore store = new CountingStore();
  final Tracker tracker = new Tracker();
  final Configuration conf = new Configuration(false);

  TestMinimalCommitter() {
    conf.set(FencedOptions.SPARK_UUID, "job-1");
    conf.setInt(FencedOptions.THREADS, 4);
  }

  static String attempt(int task) {
    return String.format("attempt_202601010000_0001_m_%06d_0", task);
  }

  TaskAttemptContext taskContext(int task) {
    return new TaskAttemptContextImpl(conf, TaskAttemptID.forName(attempt(task)));
  }

  JobContext jobContext() {
    return new JobContextImpl(conf, JobID.forName("job_202601010000_0001"));
  }

  MinimalCommitter job() throws IOException {
    return new MinimalCommitter(DEST, jobContext()).withStore(store).withTracker(tracker);
  }

  /** Two tasks of two files each, committed: their uploads, as their messages carry them. */
  List<MinimalUpload> twoTasks() throws IOException {
    List<MinimalUpload> carried = new ArrayList<>();
    for (int t = 0; t < 2; t++) {
      TaskAttemptContext ctx = taskContext(t);
      MinimalCommitter c = new MinimalCommitter(DEST, ctx).withStore(store)
          .withTracker(tracker);
      c.setupTask(ctx);
      assertTrue(c.getWorkPath().toString().contains("/__magic_job-job-1/"),
          c.getWorkPath().toString());
      assertTrue(c.getWorkPath().toString().contains("/" + attempt(t) + "/"));
      tracker.write(attempt(t), "out/part-" + t + "-a.parquet");
      tracker.write(attempt(t), "out/part-" + t + "-b.parquet");
      assertTrue(c.needsTaskCommit(ctx));
      c.commitTask(ctx);
      assertEquals(2, c.taskUploads().size());
      assertTrue(tracker.held.isEmpty() || !tracker.held.containsKey(attempt(t)),
          "task commit forgets the attempt's entries");
      carried.addAll(c.taskUploads());
    }
    return carried;
  }

  @Test
  void jobCommitCompletesEachUploadInParallelThenPutsSuccess() throws IOException {
    MinimalCommitter job = job();
    job.setupJob(jobContext());
    List<MinimalUpload> carried = twoTasks();
    assertEquals(List.of(), store.requests, "setup and task commit send nothing");
    store.together = new CyclicBarrier(4); // all four completes in flight at once
    job.useUploads(carried);
    job.commitJob(jobContext());
    List<String> completes = new ArrayList<>();
    for (String r : store.requests.subList(0, 4)) {
      completes.add(r.substring(0, r.lastIndexOf(' ')));
    }
    completes.sort(null);
    assertEquals(List.of("COMPLETE out/part-0-a.parquet", "COMPLETE out/part-0-b.parquet",
        "COMPLETE out/part-1-a.parquet", "COMPLETE out/part-1-b.parquet"), completes);
    assertEquals(List.of("PUT out/_SUCCESS"), store.requests.subList(4, 5));
    assertEquals(5, store.requests.size(), store.requests.toString());
    SuccessData success = SuccessData.fromBytes(store.objects.get("out/_SUCCESS"), "_SUCCESS");
    assertEquals(MinimalCommitter.NAME, success.committer());
    assertEquals(4, success.files().size());
    assertEquals(MinimalCommitter.class.getName(),
        success.diagnostics().get("committer.class"));
  }

  @Test
  void jobCommitWithoutTheTasksUploadsIsRefused() throws IOException {
    MinimalCommitter job = job();
    PathIOException e = assertThrows(PathIOException.class, () -> job.commitJob(jobContext()));
    assertTrue(e.getMessage().contains(MinimalCommitProtocol.class.getName()), e.getMessage());
    assertEquals(List.of(), store.requests);
  }

  @Test
  void abortsAbortTheKnownUploadsOnly() throws IOException {
    MinimalCommitter job = job();
    List<MinimalUpload> carried = twoTasks();
    job.abortWithUploads(carried.subList(0, 2)); // the driver accepted task 0 only
    job.abortJob(jobContext(), JobStatus.State.FAILED);
    List<String> aborts = new ArrayList<>(store.requests);
    aborts.sort(null);
    assertEquals(List.of("ABORT out/part-0-a.parquet u-out/part-0-a.parquet",
        "ABORT out/part-0-b.parquet u-out/part-0-b.parquet"), aborts);
    store.requests.clear();
    TaskAttemptContext ctx = taskContext(5);
    tracker.write(attempt(5), "out/part-5.parquet");
    MinimalCommitter task = new MinimalCommitter(DEST, ctx).withStore(store).withTracker(tracker);
    task.abortTask(ctx);
    assertEquals(List.of("ABORT out/part-5.parquet u-out/part-5.parquet"), store.requests);
    assertTrue(!tracker.held.containsKey(attempt(5)), "task abort forgets the attempt");
  }
}
