package io.zerorename.committer;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.util.Map;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.PathIOException;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

import io.zerorename.committer.records.Json;
import io.zerorename.committer.records.StoreUrl;
import io.zerorename.committer.store.CommitStore;

/**
 * {@code auto}'s choice on a store that cannot fence: S3A's own magic committer (loaded from
 * hadoop-aws at run time; the configuration already says not to abort pending uploads it does
 * not own), every call passed to it; after its job commit, the reason for the choice is added
 * to the {@code _SUCCESS} it wrote ({@code diagnostics["committer.choice"]}).
 */
final class MagicCommitter extends PathOutputCommitter {
  static final String MAGIC_CLASS = "org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter";

  private final PathOutputCommitter inner;
  private final Path outputPath;
  private final String reason;
  private final org.apache.hadoop.conf.Configuration conf;

  MagicCommitter(Path outputPath, TaskAttemptContext context, String reason)
      throws IOException {
    super(outputPath, context);
    this.outputPath = outputPath;
    this.reason = reason;
    this.conf = context.getConfiguration();
    try {
      inner = (PathOutputCommitter) Class.forName(MAGIC_CLASS, true,
          Thread.currentThread().getContextClassLoader() != null
              ? Thread.currentThread().getContextClassLoader()
              : MagicCommitter.class.getClassLoader())
          .getConstructor(Path.class, TaskAttemptContext.class)
          .newInstance(outputPath, context);
    } catch (InvocationTargetException e) {
      throw e.getCause() instanceof IOException ? (IOException) e.getCause()
          : new IOException(e.getCause());
    } catch (ReflectiveOperationException e) {
      throw new PathIOException(outputPath.toString(), "auto chose S3A's magic committer, "
          + "which is not on the class path (hadoop-aws): " + e);
    }
  }

  PathOutputCommitter inner() {
    return inner;
  }

  @Override
  public Path getOutputPath() {
    return inner.getOutputPath();
  }

  @Override
  public Path getWorkPath() throws IOException {
    return inner.getWorkPath();
  }

  @Override
  public void setupJob(JobContext context) throws IOException {
    inner.setupJob(context);
  }

  @Override
  public void setupTask(TaskAttemptContext context) throws IOException {
    inner.setupTask(context);
  }

  @Override
  public boolean needsTaskCommit(TaskAttemptContext context) throws IOException {
    return inner.needsTaskCommit(context);
  }

  @Override
  public void commitTask(TaskAttemptContext context) throws IOException {
    inner.commitTask(context);
  }

  @Override
  public void abortTask(TaskAttemptContext context) throws IOException {
    inner.abortTask(context);
  }

  @Override
  public void commitJob(JobContext context) throws IOException {
    inner.commitJob(context);
    if (reason.isEmpty()) {
      return;
    }
    StoreUrl dest = FencedCommitter.destOf(outputPath);
    CommitStore store = FencedCommitter.storeFor(conf, dest);
    String key = dest.dirPrefix() + FencedLayout.SUCCESS;
    byte[] data;
    try {
      data = store.get(key);
    } catch (FileNotFoundException e) {
      return; // marksuccessfuljobs=false
    }
    Object parsed = Json.parse(data, dest.withKey(key));
    if (parsed instanceof Map) {
      @SuppressWarnings("unchecked")
      Map<String, Object> success = (Map<String, Object>) parsed;
      Object diagnostics = success.get("diagnostics");
      if (diagnostics instanceof Map) {
        @SuppressWarnings("unchecked")
        Map<String, Object> d = (Map<String, Object>) diagnostics;
        d.put("committer.choice", reason);
        store.put(key, Json.indented(success), false);
      }
    }
  }

  @Override
  public void abortJob(JobContext context, JobStatus.State state) throws IOException {
    inner.abortJob(context, state);
  }

  @Override
  @SuppressWarnings("deprecation")
  public void cleanupJob(JobContext context) throws IOException {
    inner.cleanupJob(context);
  }

  @Override
  @SuppressWarnings("deprecation")
  public boolean isRecoverySupported() {
    return inner.isRecoverySupported();
  }

  @Override
  public boolean isCommitJobRepeatable(JobContext context) throws IOException {
    return inner.isCommitJobRepeatable(context);
  }

  @Override
  public String toString() {
    return "zerorename auto -> " + inner;
  }
}
