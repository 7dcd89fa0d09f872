package dev.toolhost.core.spi;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * A principal is who a request to the host comes from, as its credential says: a name, the user its
 * calls are made as, the profiles it may use, and what more it may do. An HTTP front finds it for
 * every request (from a static token of the {@code auth:} section, a JWT, or the host's single
 * token) and every route, servlet and call of that request acts within it.
 *
 * <p>A principal with a user makes every call as that user: a request that names another user is
 * refused, not quietly corrected. One with {@link #actAsUsers} (a trusted front end) names the user
 * per request. The operator's principal (the host's own single token, or a host with no token on
 * loopback) may use every profile and act as any user, as the host has always let it.
 *
 * @param name the principal's name: its key in the {@code auth:} section, or a token's subject
 * @param user the user every call of this principal is made as; empty when it names none
 * @param profiles the profiles it may use, its default first; an empty list for none (an anonymous
 *     caller of an open path); empty (no list) for every profile
 * @param actAsUsers whether a request may name the user its calls act for
 * @param audit whether it may read the audit journal and list every owner's resources
 */
public record Principal(
    String name,
    Optional<String> user,
    Optional<List<String>> profiles,
    boolean actAsUsers,
    boolean audit) {

  /** The request attribute an HTTP front keeps a request's principal under. */
  public static final String ATTRIBUTE = Principal.class.getName();

  /** The profile of a principal that may use every profile and names none first. */
  public static final String MAIN_PROFILE = "main";

  public Principal {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(profiles, "profiles");
    profiles = profiles.map(List::copyOf);
  }

  /** A caller of a path open to everyone (health, protected resource metadata): no profile. */
  public static Principal anonymous() {
    return new Principal("anonymous", Optional.empty(), Optional.of(List.of()), false, false);
  }

  /**
   * The operator: the holder of the host's single token, or anyone on a loopback host without one.
   * Every profile, any user, the audit journal.
   */
  public static Principal operator(String name) {
    return new Principal(name, Optional.empty(), Optional.empty(), true, true);
  }

  /** Whether this principal may use the named profile. */
  public boolean mayUse(String profile) {
    return profiles.map(allowed -> allowed.contains(profile)).orElse(true);
  }

  /** The profile a request that names none uses: the first of its profiles, else {@code main}. */
  public String defaultProfile() {
    return profiles.filter(named -> !named.isEmpty()).map(List::getFirst).orElse(MAIN_PROFILE);
  }

  /** Of the given profiles, those this principal may use, in their order. */
  public List<String> usable(List<String> names) {
    return names.stream().filter(this::mayUse).toList();
  }

  /** Why this principal may not use the profile, for a 403: names the profiles it may use. */
  public String profileRefusal(String profile) {
    return "The principal '"
        + name
        + "' may not use the profile '"
        + profile
        + "': its profiles are "
        + String.join(", ", profiles.orElse(List.of()))
        + ".";
  }

  /**
   * Why a request that names this user is refused, if it is: the principal makes its calls as
   * another user and may not act as users.
   */
  public Optional<String> userRefusal(Optional<String> asked) {
    if (asked.isEmpty() || actAsUsers || user.isEmpty() || user.equals(asked)) {
      return Optional.empty();
    }
    return Optional.of(
        "The principal '"
            + name
            + "' makes its calls as the user '"
            + user.get()
            + "' and may not act as another: leave 'user' out, or send '"
            + user.get()
            + "'.");
  }

  /**
   * The user a call of a request is made as: this principal's own, else the one the request names
   * (when {@link #userRefusal} has none), else none (the host's default user).
   */
  public Optional<String> callUser(Optional<String> asked) {
    return user.isPresent() && !actAsUsers ? user : asked.or(() -> user);
  }
}
