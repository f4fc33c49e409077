package io.zerorename.committer.store;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;

import io.zerorename.committer.records.Json;

/**
 * The store on a local (or shared POSIX) file system, for {@code file://} destinations, laid out
 * as the Python reference's {@code LocalStore}: keys are absolute paths without the leading
 * slash; multipart uploads are emulated under {@code <tmp>/.zerorename-uploads/<upload id>/}
 * ({@code meta.json} naming the destination URL, one file per part), so either implementation
 * completes, lists and aborts the other's; a conditional PUT is a hard link (which fails when
 * the name exists), so conditional writes are atomic by construction.
 */
public final class LocalCommitStore implements CommitStore {
  public static final String UPLOADS_DIR = ".zerorename-uploads";
  public static final String TMP_PREFIX = ".zerorename-tmp-";

  private final Path uploads;

  public LocalCommitStore(Path uploadsRoot) {
    this.uploads = uploadsRoot.resolve(UPLOADS_DIR);
  }

  /** The Python reference's default: the system temp dir ({@code TMPDIR}, else /tmp). */
  public static LocalCommitStore create() {
    String tmp = System.getenv("TMPDIR");
    if (tmp == null || tmp.isEmpty()) {
      tmp = System.getProperty("java.io.tmpdir", "/tmp");
    }
    return new LocalCommitStore(Paths.get(tmp));
  }

  @Override
  public String name() {
    return "local";
  }

  @Override
  public boolean atomicByConstruction() {
    return true;
  }

  private static Path path(String key) {
    return Paths.get("/" + key);
  }

  private static String url(Path p) {
    return "file://" + p.toAbsolutePath();
  }

  private static String keyOf(Path p) {
    return p.toAbsolutePath().toString().substring(1);
  }

  static String md5(byte[] data) {
    try {
      return hex(MessageDigest.getInstance("MD5").digest(data));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  static String md5(Path file) throws IOException {
    try (InputStream in = Files.newInputStream(file)) {
      MessageDigest md = MessageDigest.getInstance("MD5");
      byte[] buf = new byte[1 << 16];
      int n;
      while ((n = in.read(buf)) > 0) {
        md.update(buf, 0, n);
      }
      return hex(md.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String hex(byte[] digest) {
    StringBuilder out = new StringBuilder();
    for (byte b : digest) {
      out.append(String.format("%02x", b));
    }
    return out.toString();
  }

  private static Path temp(Path beside) throws IOException {
    Files.createDirectories(beside.getParent());
    return beside.getParent().resolve(TMP_PREFIX + UUID.randomUUID().toString()
        .replace("-", ""));
  }

  @Override
  public void put(String key, byte[] data, boolean ifNoneMatch) throws IOException {
    Path target = path(key);
    Path tmp = temp(target);
    Files.write(tmp, data);
    publish(tmp, target, ifNoneMatch, key);
  }

  private static void publish(Path tmp, Path target, boolean ifNoneMatch, String key)
      throws IOException {
    try {
      if (ifNoneMatch) {
        try {
          Files.createLink(target, tmp);
        } catch (FileAlreadyExistsException e) {
          throw new PreconditionFailedException("file:///" + key, "the file exists (412)");
        }
      } else {
        try {
          Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE,
              StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
        }
      }
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  @Override
  public byte[] get(String key) throws IOException {
    try {
      return Files.readAllBytes(path(key));
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException("file:///" + key);
    }
  }

  @Override
  public ObjectEntry head(String key) throws IOException {
    Path p = path(key);
    if (!Files.isRegularFile(p)) {
      return null;
    }
    return new ObjectEntry(key, Files.size(p), md5(p), Files.getLastModifiedTime(p).toMillis());
  }

  @Override
  public void delete(Collection<String> keys) throws IOException {
    for (String k : keys) {
      Path p = path(k);
      Files.deleteIfExists(p);
      Path dir = p.getParent();
      // prune the committer's emptied working directories, as the Python store does
      while (dir != null && dir.toString().contains("/__") && isEmptyDir(dir)) {
        Files.deleteIfExists(dir);
        dir = dir.getParent();
      }
    }
  }

  private static boolean isEmptyDir(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return false;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
      return !s.iterator().hasNext();
    }
  }

  @Override
  public List<ObjectEntry> list(String prefix) throws IOException {
    Path p = path(prefix);
    Path base = prefix.endsWith("/") ? p : p.getParent();
    List<ObjectEntry> out = new ArrayList<>();
    if (base == null || !Files.isDirectory(base)) {
      return out;
    }
    try (Stream<Path> walk = Files.walk(base)) {
      for (Path f : (Iterable<Path>) walk::iterator) {
        String name = f.getFileName().toString();
        if (Files.isRegularFile(f) && !name.startsWith(TMP_PREFIX)
            && !f.toString().contains("/" + UPLOADS_DIR + "/")) {
          String key = keyOf(f);
          if (key.startsWith(prefix)) {
            out.add(new ObjectEntry(key, Files.size(f), "",
                Files.getLastModifiedTime(f).toMillis()));
          }
        }
      }
    }
    out.sort((a, b) -> a.key().compareTo(b.key()));
    return out;
  }

  @Override
  public List<String> listPrefixes(String prefix) throws IOException {
    Path p = path(prefix);
    Path base = prefix.endsWith("/") ? p : p.getParent();
    List<String> out = new ArrayList<>();
    if (base == null || !Files.isDirectory(base)) {
      return out;
    }
    try (DirectoryStream<Path> s = Files.newDirectoryStream(base)) {
      for (Path d : s) {
        String key = keyOf(d) + "/";
        if (Files.isDirectory(d) && key.startsWith(prefix)
            && !d.getFileName().toString().equals(UPLOADS_DIR)) {
          out.add(key);
        }
      }
    }
    Collections.sort(out);
    return out;
  }

  @Override
  public List<PendingUpload> listUploads(String prefix) throws IOException {
    List<PendingUpload> out = new ArrayList<>();
    if (!Files.isDirectory(uploads)) {
      return out;
    }
    String want = "file:///" + prefix;
    try (DirectoryStream<Path> s = Files.newDirectoryStream(uploads)) {
      for (Path d : s) {
        String id = d.getFileName().toString();
        if (id.startsWith(".")) {
          continue;
        }
        try {
          Object meta = Json.parse(Files.readAllBytes(d.resolve("meta.json")), id);
          Object u = meta instanceof Map ? ((Map<?, ?>) meta).get("url") : null;
          if (u instanceof String && ((String) u).startsWith(want)) {
            out.add(new PendingUpload(((String) u).substring("file:///".length()), id));
          }
        } catch (IOException e) {
          // being created, completed or aborted
        }
      }
    }
    return out;
  }

  /**
   * Make {@code file} (a task's finished output) the one part of a new upload of {@code key}:
   * moved, not copied, when it is on the same file system. Returns the upload ID and the part's
   * ETag.
   */
  public String[] uploadFile(String key, Path file) throws IOException {
    String etag = md5(file);
    String id = UUID.randomUUID().toString().replace("-", "");
    Files.createDirectories(uploads);
    Path staging = uploads.resolve(".new-" + id);
    Files.createDirectory(staging);
    Map<String, Object> meta = new java.util.LinkedHashMap<>();
    meta.put("url", url(path(key)));
    meta.put("initiated", (double) System.currentTimeMillis() / 1000.0);
    Files.write(staging.resolve("meta.json"), Json.spaced(meta));
    try {
      Files.move(file, staging.resolve("part-00001"), StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      Files.copy(file, staging.resolve("part-00001"));
      Files.delete(file);
    }
    Files.move(staging, uploads.resolve(id), StandardCopyOption.ATOMIC_MOVE);
    return new String[] {id, etag};
  }

  @Override
  public String complete(String key, String uploadId, List<String> etags, boolean ifNoneMatch)
      throws IOException {
    Path dir = uploads.resolve(uploadId);
    Path claimed = uploads.resolve(".completing-" + uploadId + "-"
        + UUID.randomUUID().toString().substring(0, 8));
    try {
      Files.move(dir, claimed, StandardCopyOption.ATOMIC_MOVE);
    } catch (NoSuchFileException e) {
      throw new FileNotFoundException("file:///" + key + ": no such upload " + uploadId);
    }
    Path target = path(key);
    try {
      Object meta = Json.parse(Files.readAllBytes(claimed.resolve("meta.json")), uploadId);
      if (!(meta instanceof Map) || !url(target).equals(((Map<?, ?>) meta).get("url"))) {
        throw new FileNotFoundException("upload " + uploadId + " is not of " + key);
      }
      Path tmp = temp(target);
      MessageDigest md = MessageDigest.getInstance("MD5");
      try (var out = Files.newOutputStream(tmp)) {
        for (int i = 0; i < etags.size(); i++) {
          Path part = claimed.resolve(String.format("part-%05d", i + 1));
          byte[] data = Files.readAllBytes(part);
          if (!md5(data).equals(etags.get(i).replace("\"", ""))) {
            throw new StoreRequestException("file:///" + key, "part " + (i + 1)
                + " does not have ETag " + etags.get(i), 400, "InvalidPart", null);
          }
          md.update(data);
          out.write(data);
        }
      }
      publish(tmp, target, ifNoneMatch, key);
      deleteTree(claimed);
      return hex(md.digest());
    } catch (IOException | RuntimeException e) {
      try {
        Files.move(claimed, dir, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException ignored) {
        // left claimed: listed no more
      }
      throw e;
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      List<Path> all = new ArrayList<>();
      walk.forEach(all::add);
      Collections.reverse(all);
      for (Path p : all) {
        Files.deleteIfExists(p);
      }
    }
  }

  @Override
  public boolean abort(String key, String uploadId) throws IOException {
    Path dir = uploads.resolve(uploadId);
    Path doomed = uploads.resolve(".aborting-" + uploadId + "-"
        + UUID.randomUUID().toString().substring(0, 8));
    try {
      Files.move(dir, doomed, StandardCopyOption.ATOMIC_MOVE);
    } catch (NoSuchFileException e) {
      return false;
    }
    deleteTree(doomed);
    return true;
  }

  /** The bytes of a local file (tests). */
  static String text(Path p) throws IOException {
    return new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
  }
}
