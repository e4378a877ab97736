"""Reading event text: times, people, claims, key phrases, and the annotation that combines
them (step 2 of the write path: annotation before planning). Pure functions over text;
the planners call them."""
