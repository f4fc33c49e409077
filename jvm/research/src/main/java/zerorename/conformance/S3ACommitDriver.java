package zerorename.conformance;

import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.commit.magic.MagicS3GuardCommitter;
import org.apache.hadoop.fs.s3a.commit.staging.DirectoryStagingCommitter;
import org.apache.hadoop.fs.s3a.commit.staging.PartitionedStagingCommitter;
import org.apache.hadoop.fs.s3a.commit.staging.Paths;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * The conformance driver of {@link CommitDriver} (same commands, same answers) running S3A's
 * committers of hadoop-aws 3.5.0: {@code magic} ({@link MagicS3GuardCommitter}),
 * {@code directory} and {@code partitioned} (the staging committers), against the S3 endpoint
 * the scenario's options name (a moto server), each actor stopped before every S3 request by
 * {@link PauseInterceptor}.
 *
 * <p>Each actor runs as its own user object (one name for all, so that the staging
 * committers' per-user paths on the cluster filesystem are shared): Hadoop caches filesystems
 * per user, so each actor has its own S3A filesystem, whose interceptor knows the actor from
 * the configuration it was created with, whichever of the filesystem's threads sends a request.
 * The staging committers' cluster filesystem is {@link HdfsLikeFileSystem} (paused as in
 * {@link CommitDriver}), their local disks a local directory the options name (not paused).
 *
 * <p>An actor's filesystem outlives its scenario: the next scenario's actor of the same name
 * (on the same bucket, which the caller empties between scenarios) gets it again from Hadoop's
 * cache, since creating an S3A filesystem (its SDK client, thread pools, audit manager) cost
 * more than a scenario's requests.  Every filesystem setting is the same between scenarios:
 * the {@code fs.s3a.*} options, except those naming the scenario's own local directories,
 * which the committers read from their task's configuration; when those options change, every
 * filesystem is closed and made again.  The directory in {@code fs.s3a.buffer.dir} of the
 * first scenario is the filesystem's own block buffer, unused with {@code array} buffers.
 */
public final class S3ACommitDriver {
  /** The configuration key naming the actor an S3A filesystem belongs to. */
  static final String ACTOR = "zerorename.conformance.actor";

  private S3ACommitDriver() {
  }

  /** The options that name a scenario's own directories (read from the task's
   * configuration), not a filesystem setting. */
  private static final java.util.Set<String> PER_SCENARIO = java.util.Set.of(
      "fs.s3a.buffer.dir", "fs.s3a.committer.staging.tmp.path");

  /** S3A's committers, one filesystem per actor. */
  static final class S3A implements CommitDriver.Backend {
    private final Map<String, UserGroupInformation> users = new ConcurrentHashMap<>();
    /** The filesystem settings the cached filesystems were made with. */
    private Map<String, String> made;

    /** The scenario's filesystem settings: its {@code fs.s3a.*} options but those naming
     * its directories. */
    private static Map<String, String> settings() {
      Map<String, String> found = new java.util.TreeMap<>();
      for (Map.Entry<String, String> e : CommitDriver.options().entrySet()) {
        if (e.getKey().startsWith("fs.") && !PER_SCENARIO.contains(e.getKey())) {
          found.put(e.getKey(), e.getValue());
        }
      }
      return found;
    }

    @Override
    public void configure(Configuration conf, String committer, String actor) {
      Map<String, String> now = settings();
      if (!now.equals(made)) {
        closeAll();  // filesystems of other settings
        made = now;
      }
      conf.set(ACTOR, actor);
      // the staging committers' cluster filesystem: HDFS's rules, paused like Hadoop's driver
      conf.set("fs.hlfs.impl", HdfsLikeFileSystem.class.getName());
      conf.setBoolean("fs.hlfs.impl.disable.cache", true);
      conf.set("fs.s3a.audit.enabled", "true");
      conf.set("fs.s3a.audit.execution.interceptors", PauseInterceptor.class.getName());
      // no referrer header to build per request: the interceptor is the audit wanted here
      conf.set("fs.s3a.audit.service.classname",
          "org.apache.hadoop.fs.s3a.audit.impl.NoopAuditor");
      conf.setInt("fs.s3a.committer.threads", 0);  // commit work in the caller's thread
      conf.setInt("fs.s3a.bucket.probe", 0);
      conf.set("fs.s3a.fast.upload.buffer", "array");
      conf.setInt("fs.s3a.fast.upload.active.blocks", 1);
      conf.setBoolean("fs.s3a.committer.magic.enabled", true);
      // the model names a task's files as Spark does (already unique per job)
      conf.setBoolean("fs.s3a.committer.staging.unique-filenames", false);
    }

    @Override
    public PathOutputCommitter committer(String committer, Path out, TaskAttemptContext task)
        throws IOException {
      switch (committer) {
        case "magic":
          return new MagicS3GuardCommitter(out, task);
        case "directory":
          return new DirectoryStagingCommitter(out, task);
        case "partitioned":
          return new PartitionedStagingCommitter(out, task);
        default:
          if (CommitDriver.isClassName(committer)) {
            PathOutputCommitter made = CommitDriver.byClass(committer, out, task);
            // zerorename's fenced committer has an S3 client of its own: paused too
            return CommitDriver.isFenced(made)
                ? FencedDriving.drive(made, out, task.getConfiguration()) : made;
          }
          throw new IllegalArgumentException("no S3A committer " + committer);
      }
    }

    @Override
    public String run(String actor, Callable<String> body) throws Exception {
      UserGroupInformation user = users.computeIfAbsent(actor,
          a -> UserGroupInformation.createRemoteUser("zerorename"));
      return user.doAs((PrivilegedExceptionAction<String>) body::call);
    }

    @Override
    public void reset(Collection<String> actors) {
      Paths.resetTempFolderCache();  // S3A caches local task directories by job and attempt
    }

    private void closeAll() {
      for (UserGroupInformation user : users.values()) {
        try {
          FileSystem.closeAllForUGI(user);
        } catch (IOException e) {
          // an actor's filesystem that fails to close holds nothing the next scenario uses
        }
      }
      users.clear();
    }
  }

  public static void main(String[] args) throws Exception {
    CommitDriver.serve(new S3A());
  }
}
