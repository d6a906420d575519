package mockcloud

import (
	"fmt"
	"time"
)

// UserChange is one entry of the account changelog, numbered from 1 like
// UFDS's cn=changelog, which is what the LDAP side of the mock will serve
// from it.
type UserChange struct {
	ChangeNumber int64     `json:"changenumber"`
	Type         string    `json:"changetype"` // "add" or "modify"
	Changed      []string  `json:"changed"`    // attributes set by the change
	User         User      `json:"user"`       // the account after the change
	Time         time.Time `json:"time"`
}

// UserPatch changes some attributes of an account; nil fields stay, ""
// removes the attribute.
type UserPatch struct {
	Login                   *string `json:"login,omitempty"`
	Email                   *string `json:"email,omitempty"`
	TritonCNSEnabled        *string `json:"triton_cns_enabled,omitempty"`
	ApprovedForProvisioning *string `json:"approved_for_provisioning,omitempty"`
}

// Users returns a copy of every account.
func (c *Cloud) Users() []User {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]User, 0, len(c.users))
	for _, u := range c.users {
		out = append(out, *u)
	}
	return out
}

// UserChanges returns the changelog entries numbered above after.
func (c *Cloud) UserChanges(after int64) []UserChange {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []UserChange
	for _, ch := range c.userLog {
		if ch.ChangeNumber > after {
			out = append(out, ch)
		}
	}
	return out
}

// AddUser adds an account.
func (c *Cloud) AddUser(u User) (User, error) {
	if u.UUID == "" || u.Login == "" {
		return User{}, fmt.Errorf("add user: %w: uuid and login are required", ErrInvalid)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.users {
		if o.UUID == u.UUID || o.Login == u.Login {
			return User{}, fmt.Errorf("add user %s: %w: uuid or login %s exists", u.UUID, ErrInvalid, u.Login)
		}
	}
	c.users = append(c.users, &u)
	c.logUserLocked("add", []string{"uuid", "login"}, u)
	return u, nil
}

// UpdateUser changes an account's login or flags.
func (c *Cloud) UpdateUser(uuid string, p UserPatch) (User, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, u := range c.users {
		if u.UUID != uuid {
			continue
		}
		var changed []string
		for _, f := range []struct {
			name string
			dst  *string
			p    *string
		}{
			{"login", &u.Login, p.Login},
			{"email", &u.Email, p.Email},
			{"triton_cns_enabled", &u.TritonCNSEnabled, p.TritonCNSEnabled},
			{"approved_for_provisioning", &u.ApprovedForProvisioning, p.ApprovedForProvisioning},
		} {
			if f.p != nil {
				*f.dst = *f.p
				changed = append(changed, f.name)
			}
		}
		c.logUserLocked("modify", changed, *u)
		return *u, nil
	}
	return User{}, fmt.Errorf("update user %s: %w", uuid, ErrNotFound)
}

func (c *Cloud) logUserLocked(kind string, changed []string, u User) {
	c.userLog = append(c.userLog, UserChange{ChangeNumber: int64(len(c.userLog) + 1),
		Type: kind, Changed: changed, User: u, Time: c.now()})
}
