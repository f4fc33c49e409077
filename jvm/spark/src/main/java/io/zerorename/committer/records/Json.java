package io.zerorename.committer.records;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * JSON exactly as the Python reference writes it, so that a record written by either
 * implementation has the same bytes.
 *
 * <p>Python writes machine records with {@code json.dumps(x, ensure_ascii=False,
 * separators=(",", ":"))} ({@link #compact}), the {@code _SUCCESS} file with
 * {@code indent=2} ({@link #indented}) and the job marker with the default separators
 * ({@link #spaced}). Values are {@code Map} (written in iteration order), {@code List},
 * {@code String}, {@code Long}/{@code Integer}, {@code Boolean} and {@code null}; strings are
 * escaped as Python escapes them (short escapes for {@code \n \r \t \b \f}, lower-case
 * {@code \\u00xx} for the other control characters, nothing else). Parsing goes through
 * Jackson into the same plain values.
 */
public final class Json {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {
  }

  /** Compact: {@code {"a":1,"b":[2]}}. */
  public static byte[] compact(Object value) {
    StringBuilder out = new StringBuilder(256);
    write(out, value, -1, 0, ",", ":");
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** Python's default separators, no indent: {@code {"a": 1, "b": [2]}}. */
  public static byte[] spaced(Object value) {
    StringBuilder out = new StringBuilder(256);
    write(out, value, -1, 0, ", ", ": ");
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** {@code indent=2}, as Python writes {@code _SUCCESS}. */
  public static byte[] indented(Object value) {
    StringBuilder out = new StringBuilder(1024);
    write(out, value, 2, 0, ",", ": ");
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static void newline(StringBuilder out, int indent, int level) {
    if (indent >= 0) {
      out.append('\n');
      for (int i = 0; i < indent * level; i++) {
        out.append(' ');
      }
    }
  }

  private static void write(StringBuilder out, Object value, int indent, int level,
      String comma, String colon) {
    if (value == null) {
      out.append("null");
    } else if (value instanceof String) {
      quote(out, (String) value);
    } else if (value instanceof Boolean) {
      out.append(((Boolean) value) ? "true" : "false");
    } else if (value instanceof Long || value instanceof Integer) {
      out.append(value);
    } else if (value instanceof Double) {
      out.append(value);
    } else if (value instanceof Map) {
      Map<?, ?> map = (Map<?, ?>) value;
      if (map.isEmpty()) {
        out.append("{}");
        return;
      }
      out.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!first) {
          out.append(comma);
        }
        first = false;
        newline(out, indent, level + 1);
        quote(out, String.valueOf(e.getKey()));
        out.append(colon);
        write(out, e.getValue(), indent, level + 1, comma, colon);
      }
      newline(out, indent, level);
      out.append('}');
    } else if (value instanceof List) {
      List<?> list = (List<?>) value;
      if (list.isEmpty()) {
        out.append("[]");
        return;
      }
      out.append('[');
      boolean first = true;
      for (Object item : list) {
        if (!first) {
          out.append(comma);
        }
        first = false;
        newline(out, indent, level + 1);
        write(out, item, indent, level + 1, comma, colon);
      }
      newline(out, indent, level);
      out.append(']');
    } else {
      throw new IllegalArgumentException("no JSON form for " + value.getClass().getName());
    }
  }

  /** A JSON string as Python's {@code json.dumps(ensure_ascii=False)} writes it. */
  static void quote(StringBuilder out, String s) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        case '\b':
          out.append("\\b");
          break;
        case '\f':
          out.append("\\f");
          break;
        default:
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  /**
   * Parse {@code data} into plain values (LinkedHashMap, ArrayList, String, Long, Boolean,
   * null; other numbers as Double).
   *
   * @param path the record's URL, named in the error
   * @throws RecordFormatException if it is empty or not JSON
   */
  public static Object parse(byte[] data, String path) throws RecordFormatException {
    if (data.length == 0) {
      throw new RecordFormatException(path,
          "empty file (0 bytes): truncated, or not written by a committer");
    }
    try {
      return plain(MAPPER.readTree(data));
    } catch (JsonProcessingException e) {
      throw new RecordFormatException(path, "corrupt or truncated JSON: "
          + e.getOriginalMessage());
    } catch (IOException e) {
      throw new RecordFormatException(path, "unreadable JSON: " + e);
    }
  }

  private static Object plain(JsonNode node) {
    if (node == null || node.isNull()) {
      return null;
    }
    if (node.isObject()) {
      Map<String, Object> map = new LinkedHashMap<>();
      for (Map.Entry<String, JsonNode> e : node.properties()) {
        map.put(e.getKey(), plain(e.getValue()));
      }
      return map;
    }
    if (node.isArray()) {
      List<Object> list = new ArrayList<>(node.size());
      for (JsonNode item : node) {
        list.add(plain(item));
      }
      return list;
    }
    if (node.isTextual()) {
      return node.textValue();
    }
    if (node.isBoolean()) {
      return node.booleanValue();
    }
    if (node.isIntegralNumber()) {
      return node.longValue();
    }
    if (node.isNumber()) {
      return node.doubleValue();
    }
    return node.toString();
  }
}
