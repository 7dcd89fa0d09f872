package dev.toolhost.exec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The seccomp filter is the classic BPF program bwrap installs in the sandbox ({@code --seccomp
 * FD}) before it runs the command: a deny list, answered with {@code EPERM}, of the system calls a
 * sandboxed command has no use for and an escape has: {@code ptrace} and {@code process_vm_*}
 * (reading another process), {@code io_uring_*} (system calls that seccomp cannot see), new
 * namespaces ({@code unshare}, {@code setns}, {@code clone} with a {@code CLONE_NEW*} flag), the
 * mount API, {@code bpf}, {@code perf_event_open}, {@code userfaultfd}, the kernel keyring, module
 * and kexec loading; and, when the config gives no network, every socket that is not {@code
 * AF_UNIX}. {@code clone3} answers {@code ENOSYS}, since its flags sit in memory a filter cannot
 * read: the C library then falls back to {@code clone}, whose flags it can.
 *
 * <p>Made here in Java, instruction by instruction, rather than shipped as a prebuilt file: there
 * is nothing to regenerate, and the program reads as its comments say. It is for x86-64 only
 * ({@link #forArchitecture} is empty elsewhere, and the sandbox then runs without one, its other
 * walls unchanged). A call made with another architecture's convention (32-bit {@code int 0x80},
 * x32) kills the process, because its numbers would mean other calls.
 *
 * <p>The layout follows {@code struct seccomp_data}: the call's number at offset 0, the audit
 * architecture at 4, the arguments from 16, eight bytes each (the low half first on x86-64).
 */
final class SeccompFilter {

  // Classic BPF opcodes.
  private static final short LOAD_WORD = 0x20; // BPF_LD | BPF_W | BPF_ABS
  private static final short JUMP_EQUAL = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
  private static final short JUMP_SET = 0x45; // BPF_JMP | BPF_JSET | BPF_K
  private static final short RETURN = 0x06; // BPF_RET | BPF_K

  private static final int ALLOW = 0x7fff_0000;
  private static final int KILL_PROCESS = 0x8000_0000;
  private static final int ERRNO = 0x0005_0000;
  private static final int EPERM = 1;
  private static final int ENOSYS = 38;

  private static final int AUDIT_ARCH_X86_64 = 0xC000_003E;
  private static final int X32_SYSCALL_BIT = 0x4000_0000;
  private static final int AF_UNIX = 1;

  /** CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET and NEWTIME. */
  private static final int CLONE_NEW_ANY = 0x7E02_0080;

  private static final int CLONE = 56;
  private static final int CLONE3 = 435;
  private static final int SOCKET = 41;

  /** Denied with EPERM, by x86-64 number. */
  static final Map<String, Integer> DENIED = denied();

  private static Map<String, Integer> denied() {
    Map<String, Integer> calls = new TreeMap<>();
    calls.put("ptrace", 101);
    calls.put("process_vm_readv", 310);
    calls.put("process_vm_writev", 311);
    calls.put("io_uring_setup", 425);
    calls.put("io_uring_enter", 426);
    calls.put("io_uring_register", 427);
    calls.put("unshare", 272);
    calls.put("setns", 308);
    calls.put("mount", 165);
    calls.put("umount2", 166);
    calls.put("pivot_root", 155);
    calls.put("open_tree", 428);
    calls.put("move_mount", 429);
    calls.put("fsopen", 430);
    calls.put("fsconfig", 431);
    calls.put("fsmount", 432);
    calls.put("fspick", 433);
    calls.put("mount_setattr", 442);
    calls.put("bpf", 321);
    calls.put("perf_event_open", 298);
    calls.put("userfaultfd", 323);
    calls.put("keyctl", 250);
    calls.put("add_key", 248);
    calls.put("request_key", 249);
    calls.put("kexec_load", 246);
    calls.put("kexec_file_load", 320);
    calls.put("init_module", 175);
    calls.put("finit_module", 313);
    calls.put("delete_module", 176);
    calls.put("reboot", 169);
    calls.put("swapon", 167);
    calls.put("swapoff", 168);
    calls.put("acct", 163);
    calls.put("name_to_handle_at", 303);
    calls.put("open_by_handle_at", 304);
    calls.put("quotactl", 179);
    calls.put("syslog", 103);
    calls.put("iopl", 172);
    calls.put("ioperm", 173);
    return Map.copyOf(calls);
  }

  private SeccompFilter() {}

  /**
   * The filter for the JVM's architecture ({@code os.arch}), or empty where there is none.
   *
   * @param network whether sockets of every family are allowed
   */
  static Optional<byte[]> forArchitecture(String osArch, boolean network) {
    return osArch.equals("amd64") || osArch.equals("x86_64")
        ? Optional.of(x86_64(network))
        : Optional.empty();
  }

  /** The program for x86-64, as the bytes of {@code struct sock_filter[]}. */
  static byte[] x86_64(boolean network) {
    List<long[]> program = new ArrayList<>();
    // Another architecture's convention: its numbers mean other calls. Kill.
    program.add(load(4));
    program.add(jump(JUMP_EQUAL, AUDIT_ARCH_X86_64, 1, 0));
    program.add(ret(KILL_PROCESS));
    program.add(load(0));
    program.add(jump(JUMP_SET, X32_SYSCALL_BIT, 0, 1));
    program.add(ret(KILL_PROCESS));
    // The deny list: each number, EPERM.
    for (int number : new TreeMap<>(DENIED).values()) {
      program.add(jump(JUMP_EQUAL, number, 0, 1));
      program.add(ret(ERRNO | EPERM));
    }
    // clone with any CLONE_NEW* flag in its first argument: EPERM; the number is reloaded after.
    program.add(jump(JUMP_EQUAL, CLONE, 0, 4));
    program.add(load(16));
    program.add(jump(JUMP_SET, CLONE_NEW_ANY, 0, 1));
    program.add(ret(ERRNO | EPERM));
    program.add(load(0));
    // clone3's flags are out of reach: ENOSYS, and the C library falls back to clone.
    program.add(jump(JUMP_EQUAL, CLONE3, 0, 1));
    program.add(ret(ERRNO | ENOSYS));
    if (!network) {
      // socket(domain, ...): only AF_UNIX.
      program.add(jump(JUMP_EQUAL, SOCKET, 0, 3));
      program.add(load(16));
      program.add(jump(JUMP_EQUAL, AF_UNIX, 1, 0));
      program.add(ret(ERRNO | EPERM));
    }
    program.add(ret(ALLOW));
    ByteBuffer bytes = ByteBuffer.allocate(program.size() * 8).order(ByteOrder.nativeOrder());
    for (long[] instruction : program) {
      bytes.putShort((short) instruction[0]);
      bytes.put((byte) instruction[1]);
      bytes.put((byte) instruction[2]);
      bytes.putInt((int) instruction[3]);
    }
    return bytes.array();
  }

  private static long[] load(int offset) {
    return new long[] {LOAD_WORD, 0, 0, offset};
  }

  private static long[] jump(short code, int value, int ifTrue, int ifFalse) {
    return new long[] {code, ifTrue, ifFalse, value & 0xFFFF_FFFFL};
  }

  private static long[] ret(int value) {
    return new long[] {RETURN, 0, 0, value & 0xFFFF_FFFFL};
  }
}
