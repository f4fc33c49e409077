package io.zerorename.committer.records;

/**
 * Every URL read back from a record is checked against the job's destination before a request
 * uses it (the Python reference's {@code check_destination} and {@code check_relpath}): inside
 * the destination, no empty, {@code .} or {@code ..} element, not in a committer's area.
 */
public final class Destinations {

  /** First path elements reserved for committers' data and the job's marker. */
  private static final String[] RESERVED_NAMES = {"_temporary", "_SUCCESS"};
  private static final String[] RESERVED_PREFIXES = {"__magic", "__staging_job-",
      "__fenced_job-"};

  private Destinations() {
  }

  /**
   * The path of {@code url} below {@code dest}.
   *
   * @param path the record naming {@code url}, named in the error
   * @throws RecordFormatException if {@code url} lies anywhere else
   */
  public static String relative(String url, String dest, String path)
      throws RecordFormatException {
    StoreUrl u;
    try {
      u = StoreUrl.parse(url);
    } catch (IllegalArgumentException e) {
      throw new RecordFormatException(path, "destination " + url + " is not a URL: "
          + e.getMessage());
    }
    StoreUrl d = StoreUrl.parse(dest);
    String prefix = d.dirPrefix();
    if (!u.sameStore(d) || !u.key().startsWith(prefix)) {
      throw new RecordFormatException(path, "destination " + url
          + " is outside the job destination " + dest);
    }
    String rel = u.key().substring(prefix.length());
    String why = badRelative(rel);
    if (why != null) {
      throw new RecordFormatException(path, "destination " + url + ": " + why);
    }
    return rel;
  }

  /** Why {@code rel} may not be written by a task, or null when it may. */
  public static String badRelative(String rel) {
    if (rel.isEmpty()) {
      return "empty path";
    }
    if (rel.startsWith("/") || rel.contains("://")) {
      return "absolute path; expected a path relative to the job destination";
    }
    String[] parts = rel.split("/", -1);
    for (String p : parts) {
      if (p.isEmpty() || p.equals(".") || p.equals("..")) {
        return "path '" + rel + "' has an empty, '.' or '..' element";
      }
    }
    for (String r : RESERVED_NAMES) {
      if (parts[0].equals(r)) {
        return "path '" + rel + "': '" + r + "' is reserved for committer data";
      }
    }
    for (String r : RESERVED_PREFIXES) {
      if (parts[0].startsWith(r)) {
        return "path '" + rel + "': '" + parts[0] + "' is reserved for committer data (a "
            + "committer's job directory)";
      }
    }
    return null;
  }

  /** Is {@code rel} (relative to a destination) in any committer's area, at any depth? */
  public static boolean inCommitterArea(String rel) {
    for (String part : rel.split("/")) {
      if (part.equals("_temporary")) {
        return true;
      }
      for (String r : RESERVED_PREFIXES) {
        if (part.startsWith(r)) {
          return true;
        }
      }
    }
    return false;
  }
}
