package zerorename.conformance;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.Callable;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.hadoop.mapreduce.lib.output.PathOutputCommitter;

/**
 * The conformance driver of {@link CommitDriver} (same commands, same answers, same committers:
 * FileOutputCommitter v1 and v2, the ManifestCommitter, or a class by name) on a real HDFS: a
 * MiniDFSCluster of Hadoop 3.5.0 (one NameNode, one DataNode) started once in this JVM, in a
 * temporary directory removed at the end, reached through {@link HdfsHookedFileSystem} under the
 * imitation's scheme, so that the caller's paths, schedules and comparisons are the imitation's
 * ({@link HdfsLikeFileSystem}).
 *
 * <p>Besides the class path of {@link CommitDriver} it needs hadoop-client-minicluster (the
 * minidfs jar set scripts/jvm-build.sh copies into the cache).  {@code files}, {@code mkdirs}
 * and {@code remove} act on HDFS, outside every actor's call (unpaused).
 */
public final class MiniDfsCommitDriver {
  private MiniDfsCommitDriver() {
  }

  /** Hadoop's committers on the cluster; one cached client filesystem serves every actor. */
  static final class MiniDfs implements CommitDriver.Backend {
    private final CommitDriver.Backend committers = new CommitDriver.HdfsLike();
    private final Configuration conf;
    private final File base;

    MiniDfs(Configuration conf, File base) {
      this.conf = conf;
      this.base = base;
    }

    /** {@code rules [CLASS...]}: {@link FsRules}' probes on this cluster and on each imitation
     * class (default the imitation): {@code rules} and one word per probe, its fields
     * separated by U+001F. */
    @Override
    public String command(String[] words) throws Exception {
      if (!words[0].equals("rules")) {
        return null;
      }
      String[] imitations = words.length > 1
          ? java.util.Arrays.copyOfRange(words, 1, words.length)
          : new String[] {HdfsLikeFileSystem.class.getName()};
      StringBuilder answer = new StringBuilder("rules");
      for (String line : FsRules.run(conf, base, imitations)) {
        answer.append('\t').append(line.replace('\t', '\u001f'));
      }
      return answer.toString();
    }

    @Override
    public void configure(Configuration c, String committer, String actor) {
      committers.configure(c, committer, actor);
      c.set("fs.hlfs.impl", HdfsHookedFileSystem.class.getName());
      // one DFS client for all (each instance holds a client, its threads and connections)
      c.setBoolean("fs.hlfs.impl.disable.cache", false);
      c.setInt("dfs.replication", 1);
    }

    @Override
    public PathOutputCommitter committer(String committer, Path out, TaskAttemptContext task)
        throws IOException {
      return committers.committer(committer, out, task);
    }

    @Override
    public String run(String actor, Callable<String> body) throws Exception {
      return body.call();
    }

    @Override
    public void reset(Collection<String> actors) {
    }

    private FileSystem fs() throws IOException {
      return FileSystem.get(URI.create("hlfs:///"), conf);
    }

    @Override
    public void walk(String dir, List<String> found) throws IOException {
      walk(fs(), new Path(dir), "", found);
    }

    private static void walk(FileSystem fs, Path dir, String rel, List<String> found)
        throws IOException {
      FileStatus[] children;
      try {
        children = fs.listStatus(dir);
      } catch (java.io.FileNotFoundException e) {
        return;
      }
      java.util.Arrays.sort(children, java.util.Comparator.comparing(c -> c.getPath().getName()));
      for (FileStatus c : children) {
        String r = rel.isEmpty() ? c.getPath().getName() : rel + "/" + c.getPath().getName();
        if (c.isDirectory()) {
          found.add(r + "/");
          walk(fs, c.getPath(), r, found);
        } else {
          try (InputStream in = fs.open(c.getPath())) {
            found.add(r + "=" + CommitDriver.hex(in.readAllBytes()));
          } catch (IOException e) {
            found.add(r + "=?");
          }
        }
      }
    }

    @Override
    public void mkdirs(String dir) throws IOException {
      fs().mkdirs(new Path(dir));
    }

    @Override
    public void remove(String dir) throws IOException {
      fs().delete(new Path(dir), true);
    }
  }

  /** The cluster's settings: one DataNode, replication 1, every port chosen by the system. */
  static Configuration clusterConf(File base) {
    Configuration conf = new Configuration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    conf.setInt("dfs.replication", 1);
    conf.set("fs.hlfs.impl", HdfsHookedFileSystem.class.getName());
    return conf;
  }

  public static void main(String[] args) throws Exception {
    System.setOut(System.err);  // HDFS's logging (from the start) must not reach the answers
    File base = Files.createTempDirectory("zerorename-minidfs-").toFile();
    Configuration conf = clusterConf(base);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, base).numDataNodes(1).build();
    try {
      cluster.waitActive();
      HdfsHookedFileSystem.namenode = cluster.getURI();
      CommitDriver.serve(new MiniDfs(conf, base));
    } finally {
      FileSystem.closeAll();
      cluster.shutdown(true);
      FileUtil.fullyDelete(base);
    }
    System.exit(0);  // the cluster's leftover threads must not keep the JVM
  }
}
