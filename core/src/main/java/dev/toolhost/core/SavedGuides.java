package dev.toolhost.core;

import java.util.List;
import java.util.Optional;

/**
 * Saved guides are the guides models save at run time (skills: a procedure worked out once and kept
 * for later sessions), served by {@link ToolGuides} beside the published guides and marked as
 * saved.
 *
 * <p>What a call sees is the caller's: an implementation scopes both methods to the call's user (or
 * to everyone, when its owner shares them). A published guide always wins over a saved one of the
 * same name. Thread-safe; a failure of the store behind it is an unchecked exception, which the
 * guide tools report without failing the published guides.
 */
public interface SavedGuides {

  /** The saved guides the call's caller may read, in name order. */
  List<ToolGuide> list(ToolCall call);

  /** The saved guide of that name the call's caller may read. */
  Optional<ToolGuide> find(ToolCall call, String name);
}
