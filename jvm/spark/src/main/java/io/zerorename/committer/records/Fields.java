package io.zerorename.committer.records;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.Map;

/** Checked access to the fields of a parsed record, and the small encodings records share. */
final class Fields {

  private static final DateTimeFormatter DATE =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

  private Fields() {
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> mapOf(Object data, String path, String what)
      throws RecordFormatException {
    if (!(data instanceof Map)) {
      throw new RecordFormatException(path, "not a " + what + ": a JSON object was expected");
    }
    return (Map<String, Object>) data;
  }

  static String str(Map<String, Object> d, String key, String path, boolean nonEmpty)
      throws RecordFormatException {
    Object v = d.get(key);
    if (v == null && !nonEmpty) {
      return "";
    }
    if (!(v instanceof String) || (nonEmpty && ((String) v).isEmpty())) {
      throw new RecordFormatException(path, "field '" + key + "' must be a "
          + (nonEmpty ? "non-empty " : "") + "string");
    }
    return (String) v;
  }

  static long integer(Map<String, Object> d, String key, String path, Long dflt, long minimum)
      throws RecordFormatException {
    Object v = d.get(key);
    if (v == null && dflt != null) {
      return dflt;
    }
    if (!(v instanceof Long) || (Long) v < minimum) {
      throw new RecordFormatException(path, "field '" + key + "' must be an integer >= "
          + minimum);
    }
    return (Long) v;
  }

  static Map<String, String> strMap(Object v, String path, String key)
      throws RecordFormatException {
    Map<String, String> out = new LinkedHashMap<>();
    if (v == null) {
      return out;
    }
    if (!(v instanceof Map)) {
      throw new RecordFormatException(path, "field '" + key + "' is not a JSON object");
    }
    for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
      if (!(e.getValue() instanceof String)) {
        throw new RecordFormatException(path, "field '" + key + "' maps " + e.getKey()
            + " to a non-string");
      }
      out.put(String.valueOf(e.getKey()), (String) e.getValue());
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> objectMap(Object v, String path, String key)
      throws RecordFormatException {
    if (v == null) {
      return new LinkedHashMap<>();
    }
    if (!(v instanceof Map)) {
      throw new RecordFormatException(path, "field '" + key + "' is not a JSON object");
    }
    return (Map<String, Object>) v;
  }

  /** Python's {@code date_text}: {@code 2026-01-02T03:04:05.678000Z}. */
  static String dateText(long millis) {
    try {
      return DATE.format(Instant.ofEpochMilli(millis));
    } catch (RuntimeException e) {
      return millis + " ms after the epoch";
    }
  }

  private static final String UNRESERVED =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/";

  /** Python's {@code urllib.parse.quote(key, safe="/")}. */
  static String quote(String key) {
    StringBuilder out = new StringBuilder(key.length() + 8);
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      int c = b & 0xff;
      if (c < 0x80 && UNRESERVED.indexOf(c) >= 0) {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
            .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }

  /** Python's {@code urllib.parse.unquote} (UTF-8; a bad escape is kept as it is). */
  static String unquote(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(s.length());
    byte[] raw = s.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < raw.length; i++) {
      if (raw[i] == '%' && i + 2 < raw.length
          && Character.digit(raw[i + 1], 16) >= 0 && Character.digit(raw[i + 2], 16) >= 0) {
        bytes.write(Character.digit(raw[i + 1], 16) * 16 + Character.digit(raw[i + 2], 16));
        i += 2;
      } else {
        bytes.write(raw[i]);
      }
    }
    return new String(bytes.toByteArray(), StandardCharsets.UTF_8);
  }
}
