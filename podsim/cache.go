package podsim

import "sync"

// Cache interns what the pods of one process have in common — their resolved behaviour
// (the node's profile with each distinct set of annotations) and their image references —
// so that the pods keep one copy of each rather than one per pod. Set the same Cache
// in the Config of every pod (one per process, or per node); the zero Cache is ready to use
// and it is safe for concurrent use. It only grows: it holds one entry per distinct
// profile-and-annotations combination and per distinct image.
type Cache struct {
	mu         sync.Mutex
	behaviours map[behaviour]*behaviour
	images     map[string]imagePair
}

type imagePair struct{ image, id string }

// behaviour returns the interned copy of b.
func (c *Cache) behaviour(b behaviour) *behaviour {
	if c == nil {
		return &b
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.behaviours[b]; ok {
		return p
	}
	if c.behaviours == nil {
		c.behaviours = make(map[behaviour]*behaviour)
	}
	p := &b
	c.behaviours[b] = p
	return p
}

// imageRef is imageRef, interned.
func (c *Cache) imageRef(image string) (string, string) {
	if c == nil {
		return imageRef(image)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.images[image]; ok {
		return p.image, p.id
	}
	if c.images == nil {
		c.images = make(map[string]imagePair)
	}
	i, id := imageRef(image)
	c.images[image] = imagePair{i, id}
	return i, id
}
