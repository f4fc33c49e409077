package zerorename.conformance;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.Arrays;
import java.util.Comparator;
import java.util.EnumSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;

/**
 * The local filesystem with HDFS's rules where RawLocalFileSystem differs from them, under the
 * scheme {@code hlfs}, and a hook before every outermost call so that a test can pause or crash
 * the calling actor there.
 *
 * <p>Why each override: RawLocalFileSystem's rename replaces an existing file and lists a
 * directory in no fixed order; HDFS's rename (the non-Options form) answers false when the
 * source is missing, the destination is an existing file or its parent is missing, and moves
 * the source <em>into</em> an existing destination directory; HDFS lists in name order, and
 * listing a missing path throws FileNotFoundException.  Where a call's answer is an exception,
 * it is HDFS's class: a create or rename below a file throws ParentNotDirectoryException (the
 * local disk's FileAlreadyExistsException or false), a non-recursive delete of a non-empty
 * directory PathIsNotEmptyDirectoryException; a file renamed onto itself answers true.  Each
 * rule is one of {@link FsRules}' probes, which the tests run here and on a MiniDFSCluster.
 */
public class HdfsLikeFileSystem extends RawLocalFileSystem {
  /** What the driver installs: called before every outermost filesystem call. */
  public interface Hook {
    void before(String kind, Path path, Path other) throws IOException;
  }

  public static volatile Hook hook = (kind, path, other) -> { };

  private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);

  private static final URI NAME = URI.create("hlfs:///");

  @Override
  public URI getUri() {
    return NAME;
  }

  @Override
  public String getScheme() {
    return "hlfs";
  }

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(NAME, conf);
  }

  /** A body that may throw IOException, run as one hooked call. */
  interface Call<T> {
    T run() throws IOException;
  }

  private <T> T hooked(String kind, Path path, Call<T> body) throws IOException {
    return hooked(kind, path, null, body);
  }

  private <T> T hooked(String kind, Path path, Path other, Call<T> body) throws IOException {
    return hookedCall(kind, path, other, body);
  }

  /** {@code body} as one step of the scheduler: the hook pauses before the outermost call of a
   *  thread only (a filesystem call made inside another is part of it). Shared with
   *  {@link HdfsHookedFileSystem}, the same rules on a real HDFS. */
  static <T> T hookedCall(String kind, Path path, Path other, Call<T> body) throws IOException {
    int[] depth = DEPTH.get();
    if (depth[0] == 0) {
      hook.before(kind, path, other);
    }
    depth[0]++;
    try {
      return body.run();
    } finally {
      depth[0]--;
    }
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return hooked("stat", f, () -> super.getFileStatus(f));
  }

  @Override
  public boolean exists(Path f) throws IOException {
    return hooked("stat", f, () -> super.exists(f));
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    return hooked("list", f, () -> {
      if (!pathToFile(f).exists()) {
        throw new FileNotFoundException("File " + f + " does not exist");
      }
      FileStatus[] found = super.listStatus(f);
      Arrays.sort(found, Comparator.comparing(s -> s.getPath().getName()));
      return found;
    });
  }

  @Override
  public boolean delete(Path f, boolean recursive) throws IOException {
    return hooked("delete", f, () -> {
      String[] children = pathToFile(f).list();
      if (!recursive && children != null && children.length > 0) {
        throw new org.apache.hadoop.fs.PathIsNotEmptyDirectoryException(f.toString());
      }
      return super.delete(f, recursive);
    });
  }

  /** HDFS's answer to a path below a file: its nearest existing ancestor must be a directory. */
  private static void parentsAreDirectories(File file, Path path) throws IOException {
    for (File up = file.getParentFile(); up != null; up = up.getParentFile()) {
      if (up.exists()) {
        if (!up.isDirectory()) {
          throw new org.apache.hadoop.fs.ParentNotDirectoryException(
              up + " (an ancestor of " + path + ") is not a directory");
        }
        return;
      }
    }
  }

  /**
   * Permissions are no part of what the conformance compares, and without Hadoop's native
   * library the local filesystem sets each one by running {@code chmod} in a child process
   * (tens of milliseconds for every directory and file the committers make): not set.
   */
  @Override
  public void setPermission(Path p, FsPermission permission) {
  }

  @Override
  public boolean mkdirs(Path f, FsPermission permission) throws IOException {
    return hooked("mkdirs", f, () -> super.mkdirs(f, permission));
  }

  @Override
  public boolean mkdirs(Path f) throws IOException {
    return hooked("mkdirs", f, () -> super.mkdirs(f));
  }

  @Override
  public FSDataInputStream open(Path f, int bufferSize) throws IOException {
    return hooked("open", f, () -> super.open(f, bufferSize));
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite,
      int bufferSize, short replication, long blockSize, Progressable progress)
      throws IOException {
    return hooked("create", f, () -> {
      if (pathToFile(f).isDirectory()) {
        throw new org.apache.hadoop.fs.FileAlreadyExistsException(f + " is a directory");
      }
      parentsAreDirectories(pathToFile(f), f);
      return super.create(f, permission, overwrite, bufferSize, replication, blockSize,
          progress);
    });
  }

  @Override
  public FSDataOutputStream create(Path f, boolean overwrite, int bufferSize, short replication,
      long blockSize, Progressable progress) throws IOException {
    return create(f, FsPermission.getFileDefault(), overwrite, bufferSize, replication,
        blockSize, progress);
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission,
      EnumSet<CreateFlag> flags, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    return hooked("create", f, () -> {
      parentExists(f);
      return super.createNonRecursive(f, permission, flags, bufferSize, replication, blockSize,
          progress);
    });
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission,
      boolean overwrite, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    return hooked("create", f, () -> {
      parentExists(f);
      return super.createNonRecursive(f, permission, overwrite, bufferSize, replication,
          blockSize, progress);
    });
  }

  /** HDFS's createNonRecursive: the parent is a directory that exists. */
  private void parentExists(Path f) throws IOException {
    File file = pathToFile(f);
    parentsAreDirectories(file, f);
    File parent = file.getParentFile();
    if (parent == null || !parent.isDirectory()) {
      throw new FileNotFoundException("the parent of " + f + " does not exist");
    }
  }

  @Override
  public boolean rename(Path src, Path dst) throws IOException {
    return hooked("rename", src, dst, () -> renameRule(src, dst));
  }

  /** DistributedFileSystem.rename(src, dst), the non-Options form, on local files (a test's
   * deliberately wrong imitation overrides it). */
  protected boolean renameRule(Path src, Path dst) throws IOException {
    return hdfsRename(src, dst);
  }

  private boolean hdfsRename(Path src, Path dst) throws IOException {
    File from = pathToFile(src);
    File to = pathToFile(dst);
    parentsAreDirectories(to, dst);  // HDFS checks the destination first
    if (!from.exists()) {
      return false;
    }
    if (from.isFile() && from.getCanonicalPath().equals(to.getCanonicalPath())) {
      return true;  // a file onto itself
    }
    if (to.isFile()) {
      return false;
    }
    if (to.isDirectory()) {
      to = new File(to, from.getName());
      if (to.exists()) {
        return false;
      }
    }
    File parent = to.getParentFile();
    if (parent == null || !parent.isDirectory()) {
      return false;
    }
    String fromPath = from.getCanonicalPath();
    if (to.getCanonicalPath().startsWith(fromPath + File.separator)) {
      return false;  // into its own subtree
    }
    return from.renameTo(to);
  }
}
