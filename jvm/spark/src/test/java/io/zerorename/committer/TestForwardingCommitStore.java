package io.zerorename.committer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.zerorename.committer.store.CommitStore;
import io.zerorename.committer.store.ForwardingCommitStore;
import io.zerorename.committer.store.KeyListing;
import io.zerorename.committer.store.ObjectEntry;

/**
 * {@link ForwardingCommitStore} passes every method of {@link CommitStore} (found by
 * reflection, so one added later and not forwarded fails here), its defaults and
 * {@code close} too, to its delegate: with the same arguments, returning what it returned.
 */
class TestForwardingCommitStore {

  /** One call the recording store received. */
  private record Call(Method method, Object[] args) {
  }

  @Test
  void everyMethodReachesTheDelegate() throws Exception {
    List<Call> calls = new ArrayList<>();
    int[] round = {0};
    CommitStore recording = (CommitStore) Proxy.newProxyInstance(
        CommitStore.class.getClassLoader(), new Class<?>[] {CommitStore.class},
        (proxy, method, args) -> {
          if (method.getDeclaringClass() == Object.class) {
            return method.getName().equals("equals") ? proxy == args[0]
                : method.getName().equals("hashCode") ? System.identityHashCode(proxy)
                : "recording store";
          }
          calls.add(new Call(method, args == null ? new Object[0] : args));
          return answer(method.getReturnType(), round[0]);
        });
    CommitStore forwarding = new ForwardingCommitStore(recording) { };

    List<String> checked = new ArrayList<>();
    for (Method m : CommitStore.class.getMethods()) {
      if (Modifier.isStatic(m.getModifiers())) {
        continue;
      }
      for (round[0] = 0; round[0] < 2; round[0]++) {  // every boolean both ways
        String what = m.getName() + " (round " + round[0] + ")";
        Object[] args = arguments(m, round[0]);
        calls.clear();
        Object got;
        try {
          got = m.invoke(forwarding, args);
        } catch (InvocationTargetException e) {
          throw new AssertionError(what + " threw", e.getCause());
        }
        assertEquals(List.of(m.getName()), calls.stream().map(c -> c.method().getName())
            .toList(), what + ": the calls the delegate received");
        Call call = calls.get(0);
        assertArrayEquals(m.getParameterTypes(), call.method().getParameterTypes(), what);
        for (int i = 0; i < args.length; i++) {
          if (m.getParameterTypes()[i].isPrimitive()) {
            assertEquals(args[i], call.args()[i], what + ": argument " + i);
          } else {
            assertSame(args[i], call.args()[i], what + ": argument " + i);
          }
        }
        Object expected = answer(m.getReturnType(), round[0]);
        if (m.getReturnType().isPrimitive()) {
          assertEquals(expected, got, what + ": the delegate's answer");
        } else {
          assertSame(expected, got, what + ": the delegate's answer");
        }
      }
      checked.add(m.getName());
    }
    assertTrue(checked.containsAll(List.of("name", "put", "get", "head", "delete", "list",
        "listFrom", "listPrefixes", "listUploads", "complete", "conditionalComplete",
        "completeIgnoresCondition", "multipartEtags", "abort", "atomicByConstruction",
        "close")), "methods found: " + checked);
  }

  private static final ObjectEntry ENTRY = new ObjectEntry("k", 1, "e", 2);
  private static final List<?> LIST = List.of(ENTRY);
  private static final KeyListing LISTING = new KeyListing(List.of(ENTRY), "k", true, 1);
  private static final String TEXT = "answer";
  private static final byte[] BYTES = {4, 2};

  /** What the recording store returns, in {@code round}, for a method returning {@code type}. */
  private static Object answer(Class<?> type, int round) {
    if (type == void.class) {
      return null;
    } else if (type == boolean.class) {
      return round == 0;
    } else if (type == String.class) {
      return TEXT;
    } else if (type == byte[].class) {
      return BYTES;
    } else if (type == ObjectEntry.class) {
      return ENTRY;
    } else if (type == List.class) {
      return LIST;
    } else if (type == KeyListing.class) {
      return LISTING;
    }
    throw new AssertionError("no answer for " + type + ": extend the test");
  }

  /** New arguments for {@code m}'s parameters, each distinct, booleans as {@code round} says. */
  private static Object[] arguments(Method m, int round) {
    Class<?>[] types = m.getParameterTypes();
    Object[] args = new Object[types.length];
    for (int i = 0; i < types.length; i++) {
      Class<?> t = types[i];
      if (t == String.class) {
        args[i] = "arg" + i + "-" + round;
      } else if (t == byte[].class) {
        args[i] = new byte[] {(byte) i};
      } else if (t == boolean.class) {
        args[i] = (i + round) % 2 == 0;
      } else if (t == int.class) {
        args[i] = 7 + i + round;
      } else if (t == Collection.class || t == List.class) {
        args[i] = new ArrayList<>(List.of("arg" + i));
      } else {
        throw new AssertionError("no argument for " + t + " of " + m + ": extend the test");
      }
    }
    return args;
  }
}
