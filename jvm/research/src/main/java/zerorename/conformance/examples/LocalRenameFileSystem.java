package zerorename.conformance.examples;

import java.io.IOException;

import org.apache.hadoop.fs.Path;

import zerorename.conformance.HdfsLikeFileSystem;

/**
 * A deliberately wrong imitation of HDFS, for the MiniDFSCluster comparison to catch
 * (tests/conformance/test_minidfs.py): its rename is the local disk's (POSIX rename: an existing
 * destination file is replaced, a destination directory is not moved into), where HDFS's
 * answers false for an existing file and moves the source into an existing directory.  It is
 * selected by setting {@code fs.hlfs.impl} to this class.  Never use it for anything else.
 */
public class LocalRenameFileSystem extends HdfsLikeFileSystem {
  @Override
  protected boolean renameRule(Path src, Path dst) throws IOException {
    return pathToFile(src).renameTo(pathToFile(dst));
  }
}
